"""The live kernel as the kernel tools see it: the person's namespace, their cells, their open notebooks.

- `kernel_session`: `IPythonKernel`, the kernel tools' session in a notebook, doing their work on the
  kernel's main thread.
- `cell_execution`: a cell run for the agent as the person's own run would, its outputs captured.
- `kernel_bridge`: the kernel side of a notebook kernel reached from outside (the ACP server): the kernel
  tools, run in the person's kernel.
- `live_documents`: the kernel's end of the document channel: notebooks open in JupyterLab or Notebook 7,
  changed there.

Depends on `notebook.context` (what the kernel knows of the running cell), `tools.kernel` (the tools and
their session) and `tools.notebook_files` (the document backend the notebook tools are handed).
"""
