"""The live kernel as the kernel tools see it."""
