"""Applying parsed hunks to a file's text: all of them or none, byte for byte.

`placement` decides where every hunk goes (or refuses); this module writes the result. Lines the patch keeps
or adds take the file's line endings, so a CRLF file stays CRLF under an LF patch; a patch whose body carries
its own CRs (a faithful diff of a CRLF file) is followed exactly.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from architect_nb.tools.filesystem.diffs import Opcode
from architect_nb.tools.patch.filelines import FileLines
from architect_nb.tools.patch.parse import Hunk, PatchLine
from architect_nb.tools.patch.placement import HunkError, place_hunks

__all__ = ["Applied", "HunkError", "LineEdit", "apply_hunks"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LineEdit:
    """The file's lines before and after, and which changed (difflib's opcodes), for a diff at no cost."""

    old: list[str]
    new: list[str]
    opcodes: list[Opcode] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class Applied:
    text: str
    notes: tuple[str, ...]
    edit: LineEdit | None = None


def apply_hunks(text: str, hunks: list[Hunk], shown: str = "the file") -> Applied:
    """Apply every hunk to `text` and return the new text. Raises `HunkError`; then nothing is applied."""
    f = FileLines(text)
    spots = place_hunks(f, hunks, shown)
    cr_aware = any(line.cr for hunk in hunks for line in hunk.lines)
    out: list[str] = []
    changes = _Changes()
    open_ends: list[int] = []  # indexes in `out` of lines without an ending (only the last one may keep it)
    notes: list[str] = []
    pos = 0  # first line of the file not yet copied to `out`
    for hunk, spot in zip(hunks, spots, strict=True):
        p = spot.start
        if hunk.recounted and hunk.declared is not None:
            notes.append(
                f"hunk {hunk.number}: header counts -{hunk.declared[0]} +{hunk.declared[1]} did not match "
                f"its body (-{hunk.counts[0]} +{hunk.counts[1]}); recounted."
            )
        if spot.expected is not None and p != spot.expected:
            notes.append(f"hunk {hunk.number} applied at line {p + 1} (offset {p - spot.expected:+d} lines).")
        if spot.loose:
            notes.append(f"hunk {hunk.number} matched only after ignoring trailing whitespace/line endings.")
        out.extend(f.lines[pos:p])
        changes.add("equal", p - pos, p - pos)
        if p > pos and not f.endings[p - 1]:
            open_ends.append(len(out) - 1)
        pos = _emit(f, hunk, p, out, changes, open_ends, cr_aware)
    out.extend(f.lines[pos:])
    changes.add("equal", len(f.lines) - pos, len(f.lines) - pos)
    ended = [i for i in open_ends if i < len(out) - 1]
    for i in ended:  # a line without its end (the old last line) when others now follow it
        out[i] += f.newline
    edit = LineEdit(old=f.lines, new=out, opcodes=changes.opcodes(f.lines, out, ended))
    return Applied(text="".join(out), notes=tuple(notes), edit=edit)


class _Changes:
    """The edit as difflib's opcodes, recorded while lines are copied, kept, removed and added."""

    def __init__(self) -> None:
        self.ops: list[Opcode] = []
        self.i = self.j = 0  # lines of the old and the new text accounted for

    def add(self, tag: str, n_old: int, n_new: int) -> None:
        if not n_old and not n_new:
            return
        i, j = self.i, self.j
        self.i, self.j = i + n_old, j + n_new
        if self.ops:
            last, i1, _, j1, _ = self.ops[-1]
            if last == tag or (last != "equal" and tag != "equal"):
                self.ops[-1] = (last if last == tag else "replace", i1, self.i, j1, self.j)
                return
        self.ops.append((tag, i, self.i, j, self.j))

    def opcodes(self, old: list[str], new: list[str], ended: list[int]) -> list[Opcode]:
        """The opcodes, with copied lines that gained an ending marked changed, and changed runs refined by
        difflib (they are small), so that a line a hunk removes and adds back unchanged shows as context."""
        final = _Changes()
        for tag, i1, i2, j1, j2 in self.ops:
            if tag == "replace":
                matcher = difflib.SequenceMatcher(None, old[i1:i2], new[j1:j2], autojunk=False)
                for t, a1, a2, b1, b2 in matcher.get_opcodes():
                    final.add(t, a2 - a1, b2 - b1)
                continue
            start = j1
            for j in (j for j in ended if j1 <= j < j2) if tag == "equal" else ():
                final.add("equal", j - start, j - start)
                final.add("replace", 1, 1)
                start = j + 1
            final.add(tag, i2 - i1 - (start - j1), j2 - start)
        return final.ops


def _emit(
    f: FileLines, hunk: Hunk, p: int, out: list[str], changes: _Changes, open_ends: list[int], cr_aware: bool
) -> int:
    q = p
    last_eol = ""
    for k, line in enumerate(hunk.lines):
        if line.kind == " ":
            out.append(f.lines[q])
            changes.add("equal", 1, 1)
            if not f.endings[q]:
                open_ends.append(len(out) - 1)
            last_eol = f.endings[q] or last_eol
            q += 1
        elif line.kind == "-":
            changes.add("delete", 1, 0)
            last_eol = f.endings[q] or last_eol
            q += 1
        else:
            ending = _ending(f, hunk.lines, k, q=q, last_eol=last_eol, cr_aware=cr_aware)
            if not ending:
                open_ends.append(len(out))
            out.append(line.text + ending)
            changes.add("insert", 0, 1)
    return q


def _ending(f: FileLines, lines: list[PatchLine], k: int, *, q: int, last_eol: str, cr_aware: bool) -> str:
    """The ending of added line `k`: the patch's own if it carries CRs, else its neighbours' in the file."""
    line = lines[k]
    if line.no_eol:
        return ""
    if cr_aware:
        return "\r\n" if line.cr else "\n"
    if last_eol:
        return last_eol
    ahead = q
    for later in lines[k + 1 :]:
        if later.kind != "+":
            if ahead < len(f.endings) and f.endings[ahead]:
                return f.endings[ahead]
            ahead += 1
    return f.newline
