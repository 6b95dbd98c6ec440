"""Foundations every layer may import: the generated constants, environment, ELF reader, strides, call sites, headers/."""
