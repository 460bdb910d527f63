"""Tests in real IPython kernels (current ipykernel and 6.x), driven over jupyter_client and nbclient."""
