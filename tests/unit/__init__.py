"""Tests in one Python process: tools, engine, agent loop, magics in an in-process IPython shell."""
