"""Test doubles that ship with the package: the scripted model and a local OpenAI-compatible server.

Tests, notebooks and users share them. Nothing here calls a paid API.
"""
