"""The model clients and wire formats."""
