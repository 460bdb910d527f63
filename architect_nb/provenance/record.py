"""Provenance: which lines of a cell (or a file) the agent wrote, kept so a grader can tell them apart later.

A record holds, for every line of the text as the agent left it, a short hash of the line and who wrote it:
an index into the record's runs (each a run id, its model and when) or None (the person, or before any
record). The runs' prompts are never recorded, nor any text: a line is known by its hash only.

Later the text is compared with the record line by line (`difflib` over the line hashes), so the record
follows the lines when the person inserts or moves others: a recorded agent line found unchanged is still the
agent's; one in a block that differs now was changed by the person; one missing was deleted. The next agent
edit starts from that comparison, so the lines the person changed become theirs.

A record that does not have this exact shape (hand-edited, truncated) is reported as such and never trusted.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

__all__ = [
    "METADATA_KEY",
    "Author",
    "Authorship",
    "LineState",
    "ProvenanceError",
    "TextProvenance",
    "compare",
    "line_hash",
    "stamped",
]

#: Where a cell keeps its record: `cell.metadata["architect"]["provenance"]`.
METADATA_KEY = "provenance"
VERSION = 1
_HASH_CHARS = 8
_MAX_RUNS = 200
_MAX_LINES = 200_000
_HEX = frozenset("0123456789abcdef")


class ProvenanceError(ValueError):
    """A record that is not one of ours (hand-edited or malformed): the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Author:
    """Who writes: the run and its model."""

    run_id: str
    model: str


@dataclass(slots=True)
class Authorship:
    """Who writes during the current run, shared by the engine (which sets it when a run starts) and the tools
    that stamp what they write. `enabled` off: nothing is recorded."""

    current: Author | None = None
    enabled: bool = True

    def author(self) -> Author | None:
        return self.current if self.enabled else None


def line_hash(line: str) -> str:
    """A line's short hash: the line exactly, without its line end."""
    text = line.rstrip("\r\n")
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


LineKind = Literal["agent", "person"]


@dataclass(frozen=True, slots=True)
class LineState:
    """One line of the text now: its number (1-based) and whether the agent wrote it as it is."""

    number: int
    kind: LineKind
    run: int | None = None  # the run that wrote it (index into the record's runs)


@dataclass(frozen=True, slots=True)
class TextProvenance:
    """The text now against its record.

    Attributes:
        lines: Every line now, the agent's (unchanged since it wrote them) or the person's.
        changed: How many lines the agent wrote that the person has changed since.
        deleted: How many lines the agent wrote that are gone.
        runs: The record's runs ({"run", "model", "at"}).
        untouched: The text is exactly as the agent last left it.
    """

    lines: tuple[LineState, ...]
    changed: int
    deleted: int
    runs: tuple[dict[str, str], ...]
    untouched: bool

    @property
    def agent_lines(self) -> list[int]:
        return [line.number for line in self.lines if line.kind == "agent"]


def stamped(
    before: str | None, after: str, record: Any, author: Author, *, at: float | None = None
) -> dict[str, Any]:
    """The record of a text that went from `before` (None: it is new) to `after` by `author`'s edit.

    Lines kept from `before` keep who wrote them (as `record` says, when it can be trusted); lines the edit
    wrote are the author's.
    """
    runs: list[dict[str, str]] = []
    by_before: list[int | None] = []
    old_lines = _lines(before) if before is not None else []
    if before is not None:
        try:
            runs, by_before = _attribution(old_lines, record)
        except ProvenanceError:
            runs, by_before = [], [None] * len(old_lines)
    entry = {
        "run": author.run_id,
        "model": author.model,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at if at is not None else time.time())),
    }
    index = next((i for i, run in enumerate(runs) if run.get("run") == author.run_id), None)
    if index is None:
        runs = [*runs[-(_MAX_RUNS - 1) :], entry] if len(runs) >= _MAX_RUNS else [*runs, entry]
        index = len(runs) - 1
    new_lines = _lines(after)
    by: list[int | None] = []
    matcher = SequenceMatcher(
        None, [line_hash(x) for x in old_lines], [line_hash(x) for x in new_lines], False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        by += by_before[i1:i2] if tag == "equal" else [index] * (j2 - j1)
    return {
        "v": VERSION,
        "runs": runs,
        "lines": [[line_hash(line), who] for line, who in zip(new_lines, by, strict=True)],
        "hash": _text_hash(after),
    }


def compare(text: str, record: Any) -> TextProvenance:
    """`text` now against its record. Raises `ProvenanceError` for a record that is not one of ours."""
    runs, recorded = _checked(record)
    now = _lines(text)
    matcher = SequenceMatcher(None, [h for h, _ in recorded], [line_hash(x) for x in now], autojunk=False)
    states: list[LineState] = []
    changed = deleted = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        agents = [who for _, who in recorded[i1:i2] if who is not None]
        if tag == "equal":
            states += [
                LineState(j + 1, "agent" if who is not None else "person", who)
                for j, (_, who) in zip(range(j1, j2), recorded[i1:i2], strict=True)
            ]
            continue
        states += [LineState(j + 1, "person") for j in range(j1, j2)]
        if tag == "delete":
            deleted += len(agents)
        elif tag == "replace":
            changed += len(agents)
    return TextProvenance(
        tuple(states), changed, deleted, tuple(runs), untouched=_text_hash(text) == record.get("hash")
    )


def _attribution(lines: Sequence[str], record: Any) -> tuple[list[dict[str, str]], list[int | None]]:
    """Who wrote each of `lines` now, by the record: the runs, and each line's run index or None."""
    if record is None:
        return [], [None] * len(lines)
    found = compare("".join(lines), record)
    return list(found.runs), [line.run if line.kind == "agent" else None for line in found.lines]


def _checked(record: Any) -> tuple[list[dict[str, str]], list[tuple[str, int | None]]]:
    if not isinstance(record, Mapping):
        raise ProvenanceError(f"the record is a {type(record).__name__}, not a mapping")
    if record.get("v") != VERSION:
        raise ProvenanceError(f"unknown record version {record.get('v')!r}")
    runs, lines, digest = record.get("runs"), record.get("lines"), record.get("hash")
    if not isinstance(runs, list) or len(runs) > _MAX_RUNS or not all(_is_run(run) for run in runs):
        raise ProvenanceError("its runs are not a list of {run, model, at}")
    if not isinstance(lines, list) or len(lines) > _MAX_LINES:
        raise ProvenanceError("its lines are not a list")
    if not isinstance(digest, str) or len(digest) != 16:
        raise ProvenanceError("its hash is missing")
    checked: list[tuple[str, int | None]] = []
    for item in lines:
        if not (isinstance(item, list) and len(item) == 2 and _is_hash(item[0])):
            raise ProvenanceError(f"a line entry {str(item)[:40]} is not [hash, run]")
        who = item[1]
        if who is not None and (
            isinstance(who, bool) or not isinstance(who, int) or not 0 <= who < len(runs)
        ):
            raise ProvenanceError(f"a line names run {who!r}, which the record does not have")
        checked.append((item[0], who))
    return [dict(run) for run in runs], checked


def _is_run(run: Any) -> bool:
    return isinstance(run, Mapping) and all(isinstance(run.get(key), str) for key in ("run", "model", "at"))


def _is_hash(value: Any) -> bool:
    return (
        isinstance(value, str) and len(value) == _HASH_CHARS and all(c in "0123456789abcdef" for c in value)
    )


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)
