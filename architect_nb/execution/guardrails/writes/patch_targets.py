"""The files a patch changes, read from its headers (unified and git diffs, a mailbox of them), so the check
of protected files can judge `patch` and `git apply` before they run."""

from __future__ import annotations

import re

__all__ = ["MAX_PATCH_BYTES", "patched_files"]

#: Larger patches are not read; applying one is refused as unknown.
MAX_PATCH_BYTES = 4 * 1024 * 1024

_HEADER = re.compile(
    r"^(?:(?:---|\+\+\+|\*\*\*) (?P<unified>[^\t\n]+)"
    r"|diff --git (?P<git>.+)"
    r"|(?:rename|copy) (?:from|to) (?P<renamed>.+)"
    r"|Index: (?P<index>.+))$",
    re.M,
)


def patched_files(text: str) -> list[str]:
    """Every path the patch's headers name (both sides, `/dev/null` left out), as written."""
    found: list[str] = []
    for match in _HEADER.finditer(text):
        if match.group("git"):
            found += [p for p in match.group("git").split(" ") if p]
            continue
        name = (match.group("unified") or match.group("renamed") or match.group("index") or "").strip()
        if name.startswith('"') and name.endswith('"'):
            name = name[1:-1]
        if name and name != "/dev/null":
            found.append(name)
    return found
