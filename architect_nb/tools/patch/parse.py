"""A forgiving parser for unified diffs as `diff -u`, `git diff` and language models write them.

It accepts git's extended headers, several hunks, hunk headers without line numbers or with wrong line counts
(the body is recounted), blank context lines that lost their leading space, removed lines that begin with
`-- ` and `\\ No newline at end of file`. A whole patch sent with CRLF line endings is read as if it had LF;
otherwise a body line ending in CR keeps that CR as its own line ending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["FilePatch", "Hunk", "PatchLine", "PatchParseError", "parse_patch"]

_HUNK = re.compile(r"^@@+\s*-(\d{1,15})(?:,(\d{0,15}))?\s+\+(\d{1,15})(?:,(\d{0,15}))?\s*(?:@@+ ?(.*))?$")
_VERSION = re.compile(r"^\d+\.\d+")
_GIT_HEADERS = (
    "index ",
    "old mode ",
    "new mode ",
    "new file mode ",
    "deleted file mode ",
    "similarity index ",
    "dissimilarity index ",
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
)


class PatchParseError(ValueError):
    """The text is not a unified diff this parser understands. The message says why."""


@dataclass(slots=True)
class PatchLine:
    """One body line: `kind` is ' ' (context), '-' (removed) or '+' (added); `text` has no line ending."""

    kind: str
    text: str
    cr: bool = False  # the line ended in CR (a CRLF line, in a patch that is not CRLF throughout)
    no_eol: bool = False  # followed by '\ No newline at end of file'


@dataclass(slots=True, kw_only=True)
class Hunk:
    number: int
    header: str
    old_start: int | None  # None for a bare '@@' header: the hunk is placed by its context alone
    new_start: int | None
    declared: tuple[int, int] | None  # the header's (old, new) line counts
    lines: list[PatchLine]
    heading: str = ""  # what follows the second '@@': git's function context, the line a hunk is under

    @property
    def old(self) -> list[PatchLine]:
        return [line for line in self.lines if line.kind != "+"]

    @property
    def new(self) -> list[PatchLine]:
        return [line for line in self.lines if line.kind != "-"]

    @property
    def counts(self) -> tuple[int, int]:
        return len(self.old), len(self.new)

    @property
    def recounted(self) -> bool:
        return self.declared is not None and self.declared != self.counts


@dataclass(slots=True, kw_only=True)
class FilePatch:
    """The part of a patch about one file. Its names are kept for messages only, never to choose a file."""

    old_name: str | None = None
    new_name: str | None = None
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False
    extended: list[str] = field(default_factory=list)  # git's mode, rename and index lines
    headed: bool = False  # its '---'/'+++' header pair has been read
    first_line: int = 0  # where the section starts in the patch's lines, to hand it alone to GNU patch
    end_line: int = 0

    @property
    def creates(self) -> bool:
        return self.old_name == "/dev/null" or any(h.startswith("new file mode") for h in self.extended)

    @property
    def deletes(self) -> bool:
        return self.new_name == "/dev/null" or any(h.startswith("deleted file mode") for h in self.extended)

    @property
    def shown_name(self) -> str:
        for name in (self.new_name, self.old_name):
            if name and name != "/dev/null":
                return name
        return "(unnamed)"


def parse_patch(patch: str) -> list[FilePatch]:
    """Split `patch` into file sections and hunks. Raises `PatchParseError` when it holds no hunk at all."""
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines and all(line.endswith("\r") for line in lines if line):
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]  # CRLF only in transport
    files: list[FilePatch] = []
    current: FilePatch | None = None
    i = 0
    n = len(lines)
    hunk_end = 0  # the line that ended the last hunk
    while i < n:
        head = lines[i].rstrip("\r")
        if head.startswith("diff --git ") or head.startswith("diff -"):
            current = _start(files, i, _git_names(head))
            i += 1
        elif _file_header_at(lines, i):
            if current is None or current.hunks or current.headed:
                current = _start(files, i, (None, None))
            current.headed = True
            current.old_name = _name(head[4:])
            current.new_name = _name(lines[i + 1].rstrip("\r")[4:])
            i += 2
        elif head.startswith("@@"):
            if current is None:
                current = _start(files, i, (None, None))
            hunk, i = _parse_hunk(lines, i, len(current.hunks) + 1)
            current.hunks.append(hunk)
            hunk_end = i
        elif (
            current is not None
            and current.hunks
            and head[:1] in (" ", "+", "-")
            and not _is_signature(lines, i)
        ):
            raise PatchParseError(
                f"Line {hunk_end + 1} of the patch, {lines[hunk_end][:80]!r}, interrupts hunk "
                f"{len(current.hunks)} ({current.hunks[-1].header}): every line of a hunk starts with ' ' "
                "(context), '-' (removed) or '+' (added). If it is a context line, add its leading space."
            )
        else:
            if current is not None and not current.hunks:
                if head.startswith(_GIT_HEADERS):
                    current.extended.append(head)
                elif head.startswith(("Binary files ", "GIT binary patch")):
                    current.binary = True
            i += 1
        if current is not None:
            current.end_line = i
    if not any(f.hunks or f.binary for f in files):
        raise PatchParseError(
            "No hunk found: a unified diff has '@@ -start,count +start,count @@' lines followed by lines "
            "starting with ' ' (context), '-' (removed) or '+' (added)."
        )
    return files


def _start(files: list[FilePatch], at: int, names: tuple[str | None, str | None]) -> FilePatch:
    section = FilePatch(old_name=names[0], new_name=names[1], first_line=at)
    files.append(section)
    return section


def _git_names(head: str) -> tuple[str | None, str | None]:
    match = re.match(r"^diff --git (\S+) (\S+)$", head)
    if not match:
        return None, None
    return _name(match.group(1)), _name(match.group(2))


def _name(raw: str) -> str:
    name = raw.split("\t", 1)[0].strip()
    if name.startswith('"') and name.endswith('"') and len(name) > 1:
        name = name[1:-1]
    if name != "/dev/null" and name[:2] in ("a/", "b/"):
        name = name[2:]
    return name


def _file_header_at(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _header_block_at(lines: list[str], i: int) -> bool:
    """A '--- ' and '+++ ' pair followed by a hunk header: a file header, past a hunk's counts.

    Within the counts, or with no hunk after it, such a pair is a removed '-- ' line and an added '++ ' line.
    """
    return _file_header_at(lines, i) and i + 2 < len(lines) and lines[i + 2].startswith("@@")


def _is_signature(lines: list[str], i: int) -> bool:
    """git format-patch's trailing '-- ' line, which a version line ('2.39.5') follows."""
    return (
        lines[i].rstrip("\r") in ("--", "-- ") and i + 1 < len(lines) and bool(_VERSION.match(lines[i + 1]))
    )


def _parse_hunk(lines: list[str], i: int, number: int) -> tuple[Hunk, int]:
    full_header = lines[i].rstrip("\r")
    match = _HUNK.match(full_header)
    header = full_header if len(full_header) <= 120 else full_header[:120] + "..."
    old_start = new_start = None
    declared = None
    heading = ""
    if match:
        old_start, new_start = int(match.group(1)), int(match.group(3))
        declared = (_count(match.group(2)), _count(match.group(4)))
        heading = (match.group(5) or "").rstrip()
    body: list[PatchLine] = []
    j = i + 1
    if declared is not None:
        j = _counted(lines, j, declared, body)
    j = _overflow(lines, j, body)
    if not body:
        raise PatchParseError(f"Hunk {number} ({header}) has no lines after its header.")
    hunk = Hunk(
        number=number,
        header=header,
        old_start=old_start,
        new_start=new_start,
        declared=declared,
        lines=body,
        heading=heading,
    )
    return hunk, j


def _count(raw: str | None) -> int:
    return 1 if raw is None or raw == "" else int(raw)


def _add(body: list[PatchLine], kind: str, raw: str) -> None:
    text = raw[1:] if kind != " " or raw[:1] == " " else raw
    cr = text.endswith("\r")
    body.append(PatchLine(kind, text[:-1] if cr else text, cr))


def _marker(body: list[PatchLine]) -> None:
    if body:
        body[-1].no_eol = True


def _counted(lines: list[str], j: int, declared: tuple[int, int], body: list[PatchLine]) -> int:
    """Read the body the header's counts announce; stop early where the text stops looking like a body."""
    old_left, new_left = declared
    n = len(lines)
    while j < n and (old_left > 0 or new_left > 0):
        raw = lines[j]
        tag = raw[:1]
        if tag == "\\":
            _marker(body)
        elif tag == " " or raw in ("", "\r"):
            _add(body, " ", raw)
            old_left -= 1
            new_left -= 1
        elif tag == "-":
            _add(body, "-", raw)
            old_left -= 1
        elif tag == "+":
            _add(body, "+", raw)
            new_left -= 1
        else:
            return j
        j += 1
    while j < n and lines[j][:1] == "\\":
        _marker(body)
        j += 1
    return j


def _overflow(lines: list[str], j: int, body: list[PatchLine]) -> int:
    """Body lines past the counts (or under a bare '@@'): taken while no header or trailer interrupts."""
    n = len(lines)
    while j < n:
        raw = lines[j]
        tag = raw[:1]
        if tag == "\\":
            _marker(body)
        elif tag in (" ", "+", "-"):
            if _header_block_at(lines, j) or _is_signature(lines, j):
                break
            _add(body, tag, raw)
        elif raw in ("", "\r"):
            k = j
            while k < n and lines[k] in ("", "\r"):
                k += 1
            if k >= n or lines[k][:1] not in (" ", "+", "-", "\\"):
                break  # blank lines that end the patch or a section
            if _header_block_at(lines, k) or _is_signature(lines, k):
                break
            for blank in lines[j:k]:
                _add(body, " ", blank)
            j = k
            continue
        else:
            break
        j += 1
    return j
