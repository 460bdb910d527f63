"""One file's change for review: a text diff, or a description of a binary file, never its bytes as text.

A binary file (a NUL byte in its first 8 KB, or a binary format's leading bytes) is described by kind, size
and content id (`file_kinds.describe_change`); a text file gets git's diff, decoded as UTF-8 where it is and
in the file's own encoding otherwise. A file left out of snapshots has no content to diff: what is known of
it (why it was left out, its sizes) is said instead.
"""

from __future__ import annotations

from typing import Any

from architect_nb.execution.checkpoints.records import FileChange
from architect_nb.execution.checkpoints.shadow_git import Entry, ShadowRepo
from architect_nb.tools.filesystem.file_kinds import describe_change, is_binary
from architect_nb.tools.filesystem.fileio import FileAccessError, decode_text, describe_size

__all__ = ["decode_diff", "left_out_change", "review_change"]

_LINK = "120000"
_MAX_DETECTED = 8 << 20  # a larger text file not in UTF-8 is described, not read whole to find its encoding


def review_change(shadow: ShadowRepo, path: str, first: str, last: str) -> FileChange:
    """The change to `path` from tree `first` (before the run changed it) to tree `last` (what it left)."""
    before = shadow.entries(first, [path]).get(path)
    after = shadow.entries(last, [path]).get(path)
    status = "added" if before is None else ("deleted" if after is None else "modified")
    blobs = [e.blob for e in (before, after) if e is not None and e.mode != _LINK]
    facts = shadow.blob_facts(blobs)
    if any(is_binary(facts[b].head) for b in blobs if b in facts):
        described = describe_change(path, _facts(facts, before), _facts(facts, after))
        return FileChange(path=path, status=status, diff=described + "\n")
    raw = shadow._run(["diff", "--no-color", "--no-ext-diff", "--text", first, last, "--", path]).stdout
    text = decode_diff(raw, _file_encoding(shadow, after or before, facts))
    if text is None:  # text in an 8-bit encoding no detector is sure of: described, as a binary file is
        described = describe_change(path, _facts(facts, before), _facts(facts, after))
        text = described.replace("Binary file (binary data)", "Text file (encoding not certain)") + "\n"
    return FileChange(path=path, status=status, diff=text)


def left_out_change(path: str, first: dict[str, Any], last: dict[str, Any]) -> FileChange:
    """A file the run changed that snapshots left out: why, and its size before and after."""
    before, after = first.get("before"), last.get("after")
    created = bool(first.get("created"))
    status = "added" if created else ("deleted" if after is None else "modified")
    sizes = " → ".join(
        describe_size(int(stamp[0])) if stamp else "absent"
        for stamp in ((None if created else before), after)
    )
    why = first.get("why", "over the snapshot limit")
    text = f"Not snapshotted ({why}): {sizes}. "
    text += (
        "Undo removes it if it is still as the run left it."
        if created
        else "Undo cannot restore what it held before the run."
    )
    return FileChange(path=path, status=status, diff=text + "\n")


def decode_diff(raw: bytes, encoding: str | None) -> str | None:
    """A diff's bytes as text: UTF-8, or else in `encoding`, the file's own; None when neither fits."""
    for name in ("utf-8", encoding):
        if name is not None:
            try:
                return raw.decode(name)
            except (UnicodeDecodeError, LookupError):
                continue
    return None


def _file_encoding(shadow: ShadowRepo, entry: Entry | None, facts: dict[str, Any]) -> str | None:
    """The encoding the file tools read this version of the file in (decided from all of it, as they do:
    a diff's few lines are too short to tell cp1252 from cp850), or None when they would refuse it."""
    if entry is None or entry.blob not in facts or facts[entry.blob].size > _MAX_DETECTED:
        return None
    try:
        return decode_text(shadow.read(entry.blob), "").encoding
    except FileAccessError:
        return None


def _facts(facts: dict[str, Any], entry: Entry | None) -> Any:
    return facts.get(entry.blob) if entry is not None else None
