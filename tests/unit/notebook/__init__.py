"""The notebook layer in an in-process IPython shell: magics, questions, the notebook context and the
run's output."""
