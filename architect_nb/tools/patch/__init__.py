"""apply_patch: a unified diff applied to the one file its `path` names, all hunks or none.

- `apply_patch`: the tool, and `apply_patch_text` (text in, text out) for callers that are not the model.
- `parse`: a forgiving parser for the diffs `diff -u`, `git diff` and models write.
- `placement`: where every hunk goes, decided for all hunks together; a hunk that fits two places about as
  well is refused with the places named, never guessed at (`refusals`: what it says then).
- `apply_hunks`: writing the hunks where they were placed, byte for byte (`filelines`: the file as lines).
- `gnu`: the fallback to GNU `patch`, run on a copy in a private folder so it can change nothing else.

Depends on the core and on the file tools' `filesystem.fileio`, `filesystem.textmatch`, `filesystem.diffs`
and `filesystem.edit_file` (load and write).
"""

from architect_nb.tools.patch.apply_patch import ApplyPatchArgs, ApplyPatchTool, apply_patch_text

__all__ = ["ApplyPatchArgs", "ApplyPatchTool", "apply_patch_text"]
