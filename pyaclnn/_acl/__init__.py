"""The device backend: CANN through cffi (ABI mode). The only package that imports cffi."""
