"""The members of an archive, read with Python's own readers, so the check of protected files can see where
an extraction would put each one before `tar x` or `unzip` runs."""

from __future__ import annotations

import tarfile
import zipfile

__all__ = ["MAX_MEMBERS", "members"]

#: Archives with more members than this are not listed; their extraction is refused as unknown.
MAX_MEMBERS = 20_000


def members(path: str, kind: str) -> list[str] | None:
    """The member names of the archive at `path` (`kind`: "tar" or "zip"), or None if it cannot be read."""
    try:
        if kind == "zip" or (kind != "tar" and zipfile.is_zipfile(path)):
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        else:
            with tarfile.open(path) as archive:  # any compression tarfile knows
                names = []
                for info in archive:
                    names.append(info.name)
                    if len(names) > MAX_MEMBERS:
                        return None
    except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, ValueError, RuntimeError):
        return None
    return names if len(names) <= MAX_MEMBERS else None
