"""One operator with a reference: spec.py (checks), kernel.py (NumPy phase 2), api.py (public face).

See pyaclnn/ops/__init__.py and docs/adding-an-operator.md."""
