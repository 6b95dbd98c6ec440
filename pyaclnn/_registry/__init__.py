"""The operator registry: signatures parsed from headers (signature) and the operators they declare (operators)."""
