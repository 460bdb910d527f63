"""Does this repository's git config make read-only git commands run programs?

`git status`, `git diff` and `git log -p` are read-only, but a repository's `.git/config` can make them run
commands: `core.fsmonitor`, `diff.external`, `diff.<driver>.textconv`, pagers, clean/smudge filters, and
includes that may hide any of these. A workspace cloned from elsewhere may carry such a config, so git
commands there are not treated as `safe` (they ask first).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

__all__ = ["risky_git_config"]

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"([^"]*)")?')
_KEY = re.compile(r"^\s*([A-Za-z0-9-]+)\s*(=|$)")
_RISKY_ANYWHERE = {"fsmonitor", "external", "textconv", "sshcommand", "gitproxy", "askpass", "pager"}
_RISKY_IN_SECTION = {"filter": {"clean", "smudge", "process"}, "diff": {"command"}, "merge": {"driver"}}


def risky_git_config(workspace_root: Path) -> str | None:
    """The first config entry that can run a program, as 'section.key' from the repository holding the
    workspace (its `.git/config`, found at the workspace root or above it), or None."""
    for folder in (workspace_root, *workspace_root.parents):
        config = folder / ".git" / "config"
        if config.is_file():
            try:
                return _scan(str(config), config.stat().st_mtime_ns)
            except OSError:
                return "an unreadable .git/config"
        if (folder / ".git").exists():
            return None  # a worktree or submodule pointer file: its config lives elsewhere, a user's own
    return None


@lru_cache(maxsize=64)
def _scan(path: str, mtime_ns: int) -> str | None:  # mtime_ns keys the cache to the file's version
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read(1_000_000)
    section = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0]
        if m := _SECTION.match(line):
            section = m.group(1).lower() + (f".{m.group(2)}" if m.group(2) else "")
            if section.startswith(("include", "pager")):
                return section
            line = line[line.index("]") + 1 :] if "]" in line else ""
        if m := _KEY.match(line):
            key = m.group(1).lower()
            top = section.split(".", 1)[0]
            if key in _RISKY_ANYWHERE or key in _RISKY_IN_SECTION.get(top, set()):
                return f"{section}.{key}"
    return None
