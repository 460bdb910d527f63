"""architect-nb's tests, in three layers: `unit/` (one Python process, with real subprocesses: git, rg,
bubblewrap, MCP servers; IPython only as an in-process shell), `kernel/` (real IPython kernels over
jupyter_client and nbclient) and `browser/` (JupyterLab and Notebook 7 in chromium through Playwright).
`unit/` has a folder per family (`agent`, `acp`, `execution`, `tools`, `notebook`, `core`). `support/`
holds the helpers they share. A package, so pytest imports each test module by its full name
(`tests.unit.tools.test_x`) from the repository root, and the tests import the helpers as
`tests.support.*`."""
