"""The conversation: threads, the context window, instructions and skills."""
