"""Small compositions of torch calls for operators no single aten overload computes, one module
per family (nn.py, nn2.py); a table entry names one as
``"torch:pyaclnn.ops._aten.compose.<module>.<function>"``. Imported only when such an operator
first runs (torch is imported by then)."""
