"""The Agent Client Protocol server: its parts, its notebook kernel side and the protocol end to end."""
