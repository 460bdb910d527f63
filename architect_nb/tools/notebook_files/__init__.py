"""The notebook tools' machinery: `model` (reading and writing `.ipynb` as it was laid out), `outline`
(what read_notebook shows) and `celldiff` (cell-level unified diffs)."""
