"""The search tools: search_code (Python regex), grep (literal text) and find_files (file-name globs).

- `search_tools`: the three tools.
- `walk_cache`: the walk of `tools.tree`, kept between searches while the tree does not change.
- `scope`: what no search sees (sensitive files, the state folders). `rg_walk`: rg walking the tree itself
  with those rules as arguments, where it is installed; the Python walk is the fallback and the reference.
- `collect`: the files a search looks at. `grep`: literal search with `rg`, `grep` or Python, same answers.
- `code`, `literals`, `translate`: search_code's pipeline (an `rg` prefilter from the regex's literals,
  then `re`).
- `scan` and `workers`: the regex engine, run in worker processes so a search stops at its time bound. `scan`
  runs as a plain script (`python -I -S scan.py`), so it imports nothing from this package.
- `notebooks`: grep inside `.ipynb` cells. `programs`: finding and running `rg` and `grep`. `results`: output.

Depends on the core, on `tree` (the walk and globs) and on `filesystem.fileio` and `filesystem.encodings`.
"""

from architect_nb.tools.search.search_tools import (
    DEFAULT_TIME_BOUND,
    FindFilesArgs,
    FindFilesTool,
    GrepArgs,
    GrepTool,
    SearchCodeArgs,
    SearchCodeTool,
)

__all__ = [
    "DEFAULT_TIME_BOUND",
    "FindFilesArgs",
    "FindFilesTool",
    "GrepArgs",
    "GrepTool",
    "SearchCodeArgs",
    "SearchCodeTool",
]
