"""edit_file: replace one exact, unique piece of a file, keeping its line endings, encoding and final newline.

`plan_edit` is the pure part (text in, text out, or an `EditError` that tells the model what to do next);
`EditFileTool` adds the workspace, the checks on the file and the atomic write. `load_for_edit` and
`write_edit` are shared with apply_patch.
"""

from __future__ import annotations

import bisect
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from architect_nb.paths.validators import PathTraversalError, visible
from architect_nb.tools.base import ToolResult
from architect_nb.tools.filesystem.diffs import count_changes, unified_diff
from architect_nb.tools.filesystem.fileio import (
    FileAccessError,
    TextFile,
    atomic_write_bytes,
    describe_size,
    read_text_file,
)
from architect_nb.tools.filesystem.textmatch import closest_window, loose, numbered, split_lines
from architect_nb.tools.workspace import PATH_HELP, ToolArgs, WorkspaceTool

__all__ = [
    "MAX_EDIT_BYTES",
    "EditError",
    "EditFileArgs",
    "EditFileTool",
    "EditPlan",
    "load_for_edit",
    "plan_edit",
    "write_edit",
]

MAX_EDIT_BYTES = 10 * 1024 * 1024
_MAX_LISTED = 20  # occurrences whose line numbers an ambiguity error lists


class EditError(ValueError):
    """An edit cannot be made as asked. The message is for the model: what went wrong and what to do."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EditPlan:
    """What `plan_edit` decided: the new text, the 1-based line where the match starts, how it matched."""

    new_text: str
    line: int
    loose_note: str = ""


# --------------------------------------------------------------------------- the pure part


def plan_edit(text: str, old: str, new: str, shown: str = "the file") -> EditPlan:
    """Replace the one occurrence of `old` in `text` by `new`. Raises `EditError` if that is not possible."""
    if not old:
        raise EditError(
            "old_str is empty. To create a file or replace all of it use write_file; to insert text, "
            "put the neighbouring lines in old_str and repeat them in new_str with your addition."
        )
    if old == new:
        raise EditError("old_str and new_str are identical; there is nothing to change.")
    newline = TextFile(text=text).newline
    starts = _occurrences(text, old)
    note = ""
    if len(starts) > 1:
        raise EditError(_ambiguity(text, starts, shown, ""))
    if starts:
        start, end = starts[0], starts[0] + len(old)
    else:
        start, end, note = _loose_match(text, old, shown)
    replacement = _with_newline(new, newline, text)
    if end == len(text):
        replacement = _keep_final_newline(text, text[:start], replacement, newline)
    new_text = text[:start] + replacement + text[end:]
    if new_text == text:
        raise EditError(
            "The edit changes nothing once the file's line endings and final newline are kept; "
            "the file is unchanged."
        )
    return EditPlan(new_text=new_text, line=text.count("\n", 0, start) + 1, loose_note=note)


def _occurrences(text: str, needle: str, limit: int = _MAX_LISTED + 1) -> list[int]:
    """Start offsets of `needle` in `text`, overlapping ones included, at most `limit` of them."""
    found: list[int] = []
    pos = text.find(needle)
    while pos != -1 and len(found) < limit:
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


def _ambiguity(text: str, starts: list[int], shown: str, kind: str) -> str:
    lines = [text.count("\n", 0, s) + 1 for s in starts[:_MAX_LISTED]]
    listed = ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"
    more = " (and more)" if len(starts) > _MAX_LISTED else ""
    count = f"{len(starts)}{'+' if more else ''}"
    return (
        f"old_str {kind}occurs {count} times in '{shown}', at lines {listed}{more}. Include more surrounding "
        "lines in old_str (and new_str) so that it matches exactly one place."
    )


def _with_newline(new: str, newline: str, text: str) -> str:
    """`new` with the file's line endings: CRLF files get CRLF, LF-only files get LF."""
    if newline == "\r\n":
        return new.replace("\r\n", "\n").replace("\n", "\r\n")
    if "\r\n" not in text:
        return new.replace("\r\n", "\n")
    return new


def _keep_final_newline(text: str, head: str, replacement: str, newline: str) -> str:
    """The replacement for an edit that reaches the end of the file, so that the file keeps its final
    newline, or the lack of one (only a newline that new_str brings is dropped, never the file's own)."""
    if not head + replacement:
        return replacement
    if text.endswith("\n") and not (head + replacement).endswith("\n"):
        return replacement + newline
    if not text.endswith("\n") and replacement.endswith("\n"):
        return replacement[: -len(newline)] if replacement.endswith(newline) else replacement[:-1]
    return replacement


# --------------------------------------------------------------------------- loose matching


class _LooseText:
    """The file with each line's trailing whitespace and ending dropped, mapped back to the real offsets."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)
        self.orig_starts: list[int] = []
        self.norm_starts: list[int] = []
        self.kept: list[int] = []  # length of each line once stripped
        parts = []
        orig = norm = 0
        for line in self.lines:
            stripped = loose(line)
            self.orig_starts.append(orig)
            self.norm_starts.append(norm)
            self.kept.append(len(stripped))
            parts.append(stripped)
            orig += len(line)
            norm += len(stripped) + 1
        self.total = orig
        self.text = "\n".join(parts) + ("\n" if text.endswith("\n") else "")

    def to_orig(self, offset: int, swallow: bool) -> int:
        """The real offset of a normalised one; with `swallow`, an offset at the end of a line's kept text
        moves past that line's trailing whitespace (not its ending)."""
        if offset >= len(self.text):
            return self.total
        i = bisect.bisect_right(self.norm_starts, offset) - 1
        k = offset - self.norm_starts[i]
        if swallow and k == self.kept[i]:
            line = self.lines[i]
            return self.orig_starts[i] + len(line.rstrip("\r\n"))
        return self.orig_starts[i] + k


def _loose_match(text: str, old: str, shown: str) -> tuple[int, int, str]:
    parts = old.split("\n")
    tail_stripped = bool(parts[-1]) and loose(parts[-1]) != parts[-1]
    wanted = "\n".join(loose(p) for p in parts)
    if not wanted.strip():
        raise EditError(_not_found(text, old, shown))
    norm = _LooseText(text)
    starts = _occurrences(norm.text, wanted)
    if tail_stripped:  # the last line lost trailing spaces, so it must end where a line ends
        starts = [
            s for s in starts if s + len(wanted) == len(norm.text) or norm.text[s + len(wanted)] == "\n"
        ]
    if len(starts) > 1:
        raise EditError(_ambiguity(norm.text, starts, shown, "matches only loosely but "))
    if not starts:
        raise EditError(_not_found(text, old, shown))
    start = norm.to_orig(starts[0], swallow=False)
    end = norm.to_orig(starts[0] + len(wanted), swallow=not wanted.endswith("\n"))
    matched = text[start:end]
    if matched.replace("\r\n", "\n") == old.replace("\r\n", "\n"):
        what = "line endings (the file's are kept)"
    else:
        what = "trailing whitespace and line endings"
    return start, end, f"Loose match: old_str matched only after ignoring {what}."


def _not_found(text: str, old: str, shown: str) -> str:
    file_lines = split_lines(text)
    wanted = split_lines(old)
    start, ratio = closest_window(file_lines, wanted)
    head = f"old_str was not found in '{shown}'."
    if ratio < 0.3:
        return (
            f"{head} Nothing in its {len(file_lines)} lines resembles it. Read the file with read_file "
            "and copy the text to replace exactly, indentation included."
        )
    span = max(1, min(len(wanted), 30))
    lo, hi = max(0, start - 1), min(len(file_lines), start + span + 1)
    if [line.strip() for line in file_lines[start : start + len(wanted)]] == [w.strip() for w in wanted]:
        head += " The same lines exist with different indentation."
    return (
        f"{head} The closest text is at lines {start + 1}-{min(start + span, len(file_lines))} "
        f"({ratio:.0%} alike):\n{numbered(file_lines[lo:hi], lo + 1)}\n"
        "Copy old_str exactly from the file (indentation, quotes and spelling included) and retry."
    )


# ------------------------------------------------------------ file access (shared with apply_patch)


def load_for_edit(target: Path, shown: str) -> TextFile:
    """Read a file that is about to be changed: it must be a regular, writable text file of a sane size."""
    if os.path.lexists(target) and target.is_file():
        st = target.stat()
        if not st.st_mode & 0o222:
            raise FileAccessError(f"'{shown}' is read-only; it is left unchanged.")
        if stat.S_ISREG(st.st_mode) and st.st_size > MAX_EDIT_BYTES:
            raise FileAccessError(
                f"'{shown}' is {describe_size(st.st_size)}, over the {describe_size(MAX_EDIT_BYTES)} "
                "limit for edits; change it with run_command or split it."
            )
    return read_text_file(target, shown, MAX_EDIT_BYTES)


def write_edit(target: Path, shown: str, before: TextFile | None, new_text: str) -> None:
    """Write `new_text` atomically in `before`'s encoding, unless the file changed since it was read."""
    like = before or TextFile(text="")
    data = like.encode(new_text, shown)  # raises, naming a character the file's encoding cannot store
    try:
        current = target.read_bytes() if before is not None else None
    except OSError:
        current = b"\x00gone"
    if before is not None and current != before.encode(before.text):
        raise FileAccessError(f"'{shown}' changed while it was being edited; it is left as it is now. Retry.")
    if before is None and os.path.lexists(target):
        raise FileAccessError(f"'{shown}' appeared while it was being created; it is left as it is. Retry.")
    atomic_write_bytes(target, data)


# --------------------------------------------------------------------------- the tool


class EditFileArgs(ToolArgs):
    path: str = Field(description=PATH_HELP)
    old_str: str = Field(description="Exact text to replace; must occur once, so include nearby lines.")
    new_str: str = Field(description="Replacement text.")


class EditFileTool(WorkspaceTool):
    name = "edit_file"
    description = (
        "Replace one unique piece of text in a file and return the diff. Preferred for a single change."
    )
    args_model = EditFileArgs
    sensitive = True
    mutates_files = True

    def _plan(self, args: EditFileArgs) -> tuple[Path, str, TextFile, EditPlan]:
        target = self.resolve(args.path)
        shown = self.rel(target)
        before = load_for_edit(target, shown)
        return target, shown, before, plan_edit(before.text, args.old_str, args.new_str, shown)

    def preview(self, **kwargs: Any) -> str | None:
        args = EditFileArgs.model_validate(kwargs)
        _, shown, before, plan = self._plan(args)
        return unified_diff(before.text, plan.new_text, shown)

    def execute(self, **kwargs: Any) -> ToolResult:
        args = EditFileArgs.model_validate(kwargs)
        try:
            target, shown, before, plan = self._plan(args)
            write_edit(target, shown, before, plan.new_text)
        except (PathTraversalError, FileAccessError, EditError) as exc:
            return ToolResult.fail(str(exc))
        except OSError as exc:
            return ToolResult.fail(f"Could not write '{visible(args.path)}': {exc.strerror or exc}.")
        diff = unified_diff(before.text, plan.new_text, shown)
        added, removed = count_changes(diff)
        summary = f"Edited {shown} at line {plan.line} (+{added} -{removed} lines)."
        if plan.loose_note:
            summary += " " + plan.loose_note
        return ToolResult.ok(
            f"{summary}\n{diff}", path=shown, diff=diff, line=plan.line, loose=bool(plan.loose_note)
        )
