"""Small compositions of torch calls for operators no single aten overload computes, one module
per family: ew.py (the element-wise families), tensor.py (t_*), base.py (the base families),
nn.py and nn2.py (ops-nn), index.py, creation.py. A table entry names one as
``"compose:<module>.<function>"`` (pyaclnn functions; ``"torch:..."`` names torch's own).
Imported only when such an operator first runs (torch is imported by then)."""
