"""Small compositions of torch operations for aclnn operators no single aten overload computes,
one module per table family group (nn2.py); a table entry names one as
``"torch:pyaclnn.ops._aten.compose.<module>.<function>"``. Imported only by the aten tier's
callable lookup, once torch is imported."""
