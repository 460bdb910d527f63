"""The workspace as a tree: the walk every listing and search shares, and file-name globs.

- `walk`: `walk` and `scan`, the workspace's files in order, honouring `.gitignore` files and skipping
  `.git`, virtualenvs, `node_modules` and caches; `IgnoreRules`, the ignore files as ripgrep reads them.
- `globs`: `compile_glob` and `glob_matches`, the glob syntax of list_files, find_files and the searches.

Depends on `pathspec`, the standard library and `config.schema` (the cache folders' names, which undo
leaves alone too); `filesystem` (list_files) and `search` build on it.
"""
