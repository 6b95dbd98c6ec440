"""The functions of ``pyaclnn.acl``, one module per object family of the runtime contract (session,
streams, memory, descriptors; the operators' and executors' functions are in acl.py itself)."""
