"""The secret values in a workspace's sensitive files, so they are redacted wherever they turn up.

The guardrails keep tools from reading files that match `guardrails.sensitive_files` and the sandbox masks
them, but a value from such a file can still reach a run another way: a command that prints the environment
a `.env` was loaded into, the person pasting it into a task. So the engine reads those files once and gives
their values to the redactor: `NAME=value` lines (`.env`, `.netrc`-like files) by name, other small files
whole and line by line (a PEM key, a token file). Files over 64 KB, and more than 50 files, are skipped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from architect_nb.paths.globs import PathGlobs

__all__ = ["secret_values"]

_MAX_FILES = 50
_MAX_BYTES = 64 * 1024
_MIN_VALUE = 8  # shorter values are too likely to be ordinary words
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*(.*?)\s*$")
_SKIPPED_FOLDERS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache"}


def secret_values(workspace: Path, patterns: list[str]) -> dict[str, str]:
    """`{label: value}` for the values in the workspace's files matching `patterns`."""
    globs = PathGlobs(patterns)
    if not globs:
        return {}
    found: dict[str, str] = {}
    for rel in _matching_files(Path(workspace), globs):
        try:
            data = (Path(workspace) / rel).read_bytes()
        except OSError:
            continue
        text = data.decode("utf-8", "replace")
        found.update(_values(rel, text))
    return found


def _matching_files(root: Path, globs: PathGlobs) -> list[str]:
    matches: list[str] = []
    for folder, dirs, names in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        rel_folder = "" if rel_folder == "." else rel_folder
        dirs[:] = [
            d for d in dirs if d not in _SKIPPED_FOLDERS and not os.path.islink(os.path.join(folder, d))
        ]
        for name in names:
            rel = f"{rel_folder}/{name}" if rel_folder else name
            full = os.path.join(folder, name)
            if globs.match(rel) is None or os.path.islink(full):
                continue
            try:
                if os.path.getsize(full) > _MAX_BYTES:
                    continue
            except OSError:
                continue
            matches.append(rel)
            if len(matches) >= _MAX_FILES:
                return matches
    return matches


def _values(rel: str, text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assignments = [m for line in lines if (m := _ASSIGNMENT.match(line))]
    if lines and len(assignments) == len(lines):  # an env file
        for match in assignments:
            value = match.group(2).strip().strip("'\"")
            if len(value) >= _MIN_VALUE:
                values[f"{rel}:{match.group(1)}"] = value
        return values
    whole = text.strip()
    if len(whole) >= _MIN_VALUE:
        values[rel] = whole
    for n, line in enumerate(lines, start=1):
        if len(line.strip()) >= 16 and not line.startswith("-----"):
            values[f"{rel}:{n}"] = line.strip()
    return values
