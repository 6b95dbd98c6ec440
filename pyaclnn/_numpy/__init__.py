"""The reference backend: NumPy kernels behind an emulation of the CANN runtime."""
