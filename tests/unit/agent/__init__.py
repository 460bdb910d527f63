"""The agent: the loop on the scripted model, the model clients and their wire, threads, context,
instructions and skills."""
