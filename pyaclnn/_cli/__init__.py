"""``python -m pyaclnn``: the commands (commands), samples, check, bench."""
