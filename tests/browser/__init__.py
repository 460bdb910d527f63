"""Tests in a real browser: JupyterLab and Notebook 7 in chromium through Playwright."""
