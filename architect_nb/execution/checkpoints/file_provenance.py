"""Which lines of the workspace's files a run wrote, for the run's record (`provenance.record`).

When a run ends, each text file it changed is compared from its first snapshot (before the run changed it) to
its last (what the run left): the lines the run wrote are its own, with the run's id and model; the record
keeps line hashes, never text. Binary files, links and files over `_MAX_BYTES` are left out, as are runs
without snapshots.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from architect_nb.execution.checkpoints.shadow_git import Entry, ShadowRepo
from architect_nb.provenance.record import Author, stamped
from architect_nb.tools.filesystem.file_kinds import BlobFacts, is_binary

__all__ = ["files_written"]

_MAX_BYTES = 1024 * 1024
_MAX_FILES = 500
_LINK = "120000"


def files_written(
    shadow: ShadowRepo, firsts: Mapping[str, str], lasts: Mapping[str, str], author: Author
) -> dict[str, dict[str, Any]]:
    """For each text file the run left (path → its trees before and after), the record of its lines."""
    paths = list(firsts)[:_MAX_FILES]
    befores, afters = _entries(shadow, firsts, paths), _entries(shadow, lasts, paths)
    facts = shadow.blob_facts({e.blob for e in (*befores.values(), *afters.values()) if e.mode != _LINK})
    records: dict[str, dict[str, Any]] = {}
    for path in paths:
        before, after = befores.get(path), afters.get(path)
        if after is None or after.mode == _LINK or (before is not None and before.mode == _LINK):
            continue
        text = _text(shadow, after.blob, facts)
        if text is None:
            continue
        # Before the run: absent, binary or too large to compare means every line now is the run's.
        earlier = _text(shadow, before.blob, facts) if before is not None else None
        records[path] = stamped(earlier, text, None, author)
    return records


def _entries(shadow: ShadowRepo, trees: Mapping[str, str], paths: list[str]) -> dict[str, Entry]:
    """Each path's entry in its own tree, asking git once per tree."""
    by_tree: dict[str, list[str]] = {}
    for path in paths:
        by_tree.setdefault(trees[path], []).append(path)
    found: dict[str, Entry] = {}
    for tree, named in by_tree.items():
        found.update(shadow.entries(tree, named))
    return found


def _text(shadow: ShadowRepo, blob: str, known: Mapping[str, BlobFacts]) -> str | None:
    facts = known.get(blob)
    if facts is None or facts.size > _MAX_BYTES or is_binary(facts.head):
        return None
    try:
        return shadow.read(blob).decode("utf-8")
    except UnicodeDecodeError:
        return None
