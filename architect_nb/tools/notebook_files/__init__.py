"""The notebook file tools: read_notebook, edit_notebook_cell, insert_notebook_cell and delete_notebook_cell.

- `notebook_tools`: the four tools; cells are named by id or `index:N`.
- `model`: `.ipynb` files on disk: parsed, addressed by cell, validated, written back.
- `splice`: the new text is the old one with only the changed cell's bytes rewritten, whatever the layout.
- `outline`: what read_notebook shows. `celldiff`: one unified-diff section per changed cell.
- `backend`: notebooks open in a front end (`DocumentBackend`, `LiveDocument`, `OwnNotebook`), and the
  file beside them; `cellops`: a change to cells, as the front end applies it; `outputs`: outputs in brief.

They work on files; they never import IPython. Depends on the core, the file tools
(`filesystem.edit_file`, `filesystem.fileio`, `filesystem.textmatch`, `filesystem.diffs`) and `search.scan`'s
notebook text reading, which search shares; and `architect_nb.provenance` for the record of who wrote
which lines of a cell.
"""

from architect_nb.tools.notebook_files.notebook_tools import (
    DeleteNotebookCellArgs,
    DeleteNotebookCellTool,
    EditNotebookCellArgs,
    EditNotebookCellTool,
    InsertNotebookCellArgs,
    InsertNotebookCellTool,
    ReadNotebookArgs,
    ReadNotebookTool,
)

__all__ = [
    "DeleteNotebookCellArgs",
    "DeleteNotebookCellTool",
    "EditNotebookCellArgs",
    "EditNotebookCellTool",
    "InsertNotebookCellArgs",
    "InsertNotebookCellTool",
    "ReadNotebookArgs",
    "ReadNotebookTool",
]
