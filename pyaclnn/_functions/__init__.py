"""NumPy in, NumPy out: the functions over the executor (functional) and its host call (hostcall)."""
