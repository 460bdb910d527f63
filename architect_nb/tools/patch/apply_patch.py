"""apply_patch: apply a unified diff to the one file named by `path`, all hunks or none.

The built-in applier (`parse` + `apply_hunks`) does the work; GNU `patch` is a confined fallback
(`gnu`) for what it cannot read or place. The file names in the patch's headers are never used: a
patch that holds diffs for several files is refused rather than guessed at.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from architect_nb.paths.validators import PathTraversalError, visible
from architect_nb.tools.base import ToolResult
from architect_nb.tools.filesystem.diffs import count_changes, format_unified, unified_diff
from architect_nb.tools.filesystem.edit_file import MAX_EDIT_BYTES, load_for_edit, write_edit
from architect_nb.tools.filesystem.fileio import FileAccessError, TextFile, describe_size
from architect_nb.tools.patch.apply_hunks import HunkError, LineEdit, apply_hunks
from architect_nb.tools.patch.gnu import GnuPatchError, gnu_patch, gnu_patch_available
from architect_nb.tools.patch.parse import FilePatch, PatchParseError, parse_patch
from architect_nb.tools.workspace import PATH_HELP, ToolArgs, WorkspaceTool

__all__ = ["ApplyPatchArgs", "ApplyPatchTool", "PatchError", "PatchOutcome", "apply_patch_text"]

_SECTION_HEADER = re.compile(r"^(diff |Index: |\*\*\* (?!\d+(,\d+)? \*\*\*\*))", re.MULTILINE)
_MAX_NOTES = 8
_CONTEXT_HUNK = re.compile(r"^\*{15}$", re.MULTILINE)
_BOM = "\ufeff"
_CARRIES_BOM = re.compile("^(?:[ +-]|[ !+<>-] )\ufeff", re.MULTILINE)  # unified, context or normal diffs
_NORMAL_HUNK = re.compile(r"^\d+(,\d+)?[acd]\d+(,\d+)?\r?\n[<>] ", re.MULTILINE)


class PatchError(ValueError):
    """A patch cannot be applied. The message is for the model: which hunk failed and what to do."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchOutcome:
    text: str
    notes: tuple[str, ...] = ()
    engine: Literal["builtin", "gnu-patch"] = "builtin"
    hunks: int = 0
    edit: LineEdit | None = None  # the lines before and after, and which changed: the diff at no cost


def apply_patch_text(
    text: str | None, patch: str, shown: str = "the file", fallback: bool = True
) -> PatchOutcome:
    """Apply `patch` to `text` (None: the file does not exist yet). Raises `PatchError`."""
    try:
        files = parse_patch(patch)
    except PatchParseError as exc:
        form = _other_format(patch)
        if fallback and text is not None and form is not None and len(_SECTION_HEADER.findall(patch)) <= 1:
            try:
                return PatchOutcome(text=gnu_patch(text, patch, form), engine="gnu-patch", notes=_GNU_NOTE)
            except GnuPatchError:
                pass
        raise PatchError(f"The patch cannot be read: {exc} '{shown}' is unchanged.") from None
    section = _one_section(files, shown)
    base = _base_text(text, section, shown)
    try:
        applied = apply_hunks(base, section.hunks, shown)
    except HunkError as exc:
        if fallback and not exc.ambiguous and gnu_patch_available():
            lines = patch.split("\n")[section.first_line : section.end_line]
            try:
                new = gnu_patch(base, "\n".join(lines) + "\n")
            except GnuPatchError:
                pass
            else:
                return PatchOutcome(text=new, engine="gnu-patch", notes=_GNU_NOTE, hunks=len(section.hunks))
        raise PatchError(str(exc) + _name_hint(section, shown)) from None
    return PatchOutcome(text=applied.text, notes=applied.notes, hunks=len(section.hunks), edit=applied.edit)


def _name_hint(section: FilePatch, shown: str) -> str:
    """When a patch fails and its header names another file, say so: the model may have mixed files up."""
    name = section.shown_name
    if name in ("(unnamed)", shown) or shown.endswith("/" + name) or name.endswith("/" + shown):
        return ""
    return (
        f"\nThe patch's header names '{visible(name[:100])}', but it is applied to '{shown}', the path "
        "argument. If the patch is for that other file, call apply_patch with its path."
    )


def _other_format(patch: str) -> Literal["context", "normal"] | None:
    """The older diff formats GNU patch reads and the built-in parser does not."""
    if _CONTEXT_HUNK.search(patch):
        return "context"
    if _NORMAL_HUNK.search(patch):
        return "normal"
    return None


_GNU_NOTE = ("the built-in applier could not place it; GNU patch applied it exactly (no fuzz).",)


def _one_section(files: list[FilePatch], shown: str) -> FilePatch:
    sections = [f for f in files if f.hunks or f.binary or f.extended]
    if len(sections) > 1:
        names = ", ".join(visible(f.shown_name[:100]) for f in sections[:6])
        raise PatchError(
            f"The patch holds diffs for {len(sections)} files ({names}); apply_patch changes only '{shown}', "
            "the path argument. Send one apply_patch call per file, each with that file's diff alone."
        )
    section = sections[0]
    if section.binary:
        raise PatchError(f"The patch is a binary diff; apply_patch edits text files. '{shown}' is unchanged.")
    if section.deletes:
        raise PatchError(f"The patch deletes the file; use delete_file for that. '{shown}' is unchanged.")
    if not section.hunks:
        raise PatchError(
            "The patch changes only the file's mode or name, which apply_patch does not do. "
            f"'{shown}' is unchanged."
        )
    return section


def _base_text(text: str | None, section: FilePatch, shown: str) -> str:
    if text is None:
        if section.creates or all(not hunk.old for hunk in section.hunks):
            return ""
        raise PatchError(
            f"'{shown}' does not exist, and the patch changes existing lines. Check the path, or, to create "
            "the file, send a patch from /dev/null or use write_file."
        )
    if section.creates and text:
        raise PatchError(
            f"The patch creates a new file (--- /dev/null), but '{shown}' already exists and is not empty. "
            "Make the patch against its current text. The file is unchanged."
        )
    return text


# --------------------------------------------------------------------------- the tool


class ApplyPatchArgs(ToolArgs):
    path: str = Field(description=PATH_HELP + " The only file changed; names in the patch are ignored.")
    patch: str = Field(description="Unified diff for this file (diff -u or git diff), one or more hunks.")


class ApplyPatchTool(WorkspaceTool):
    name = "apply_patch"
    description = (
        "Apply a unified diff to one file: all hunks or none. For several changes in one file; "
        "for a single change prefer edit_file."
    )
    args_model = ApplyPatchArgs
    sensitive = True
    mutates_files = True

    def __init__(self, workspace_root: Path) -> None:
        super().__init__(workspace_root)
        self._last: _Plan | None = None  # the preview's work, reused by the call that follows it

    def _plan(self, args: ApplyPatchArgs) -> _Plan:
        if len(args.patch) > MAX_EDIT_BYTES:
            raise PatchError(
                f"The patch is {describe_size(len(args.patch))}, over the {describe_size(MAX_EDIT_BYTES)} "
                "limit; split it into several patches or use write_file."
            )
        if not args.patch.strip():
            raise PatchError("The patch is empty; send a unified diff with at least one '@@' hunk.")
        target = self.resolve(args.path)
        shown = self.rel(target)
        before = load_for_edit(target, shown) if _exists(target) else None
        last = self._last
        if last is not None and (last.target, last.patch, last.before) == (target, args.patch, before):
            return last  # the same patch on the same bytes: the same result
        view = _patched_view(before, args.patch)
        if view is not None and view.encoding != "utf-8":
            outcome = apply_patch_text(view.text, args.patch, shown, fallback=False)
        else:
            outcome = apply_patch_text(view.text if view else None, args.patch, shown)
        if view is not None and outcome.text == view.text:
            raise PatchError(f"The patch makes no change to '{shown}' (its hunks hold only context lines).")
        diff = _diff(view.text if view else "", outcome, shown)
        plan = _Plan(
            target=target, shown=shown, patch=args.patch, before=before, view=view, outcome=outcome, diff=diff
        )
        self._last = plan
        return plan

    def preview(self, **kwargs: Any) -> str | None:
        return self._plan(ApplyPatchArgs.model_validate(kwargs)).diff

    def execute(self, **kwargs: Any) -> ToolResult:
        args = ApplyPatchArgs.model_validate(kwargs)
        try:
            plan = self._plan(args)
            if plan.view is None:
                self._make_parents(plan.target, plan.shown)
            write_edit(plan.target, plan.shown, plan.view, plan.outcome.text)
        except (PathTraversalError, FileAccessError, PatchError) as exc:
            return ToolResult.fail(str(exc))
        except OSError as exc:
            return ToolResult.fail(f"Could not write '{visible(args.path)}': {exc.strerror or exc}.")
        finally:
            self._last = None
        outcome, diff = plan.outcome, plan.diff
        added, removed = count_changes(diff)
        plural = "s" if outcome.hunks != 1 else ""
        verb = "Created" if plan.view is None else "Patched"
        what = f"{outcome.hunks} hunk{plural} applied" if outcome.hunks else "applied"
        lines = [f"{verb} {plan.shown}: {what} (+{added} -{removed} lines)."]
        lines += [f"Note: {note}" for note in outcome.notes[:_MAX_NOTES]]
        if len(outcome.notes) > _MAX_NOTES:
            lines.append(f"Note: ... and {len(outcome.notes) - _MAX_NOTES} more.")
        return ToolResult.ok(
            "\n".join(lines),
            path=plan.shown,
            diff=diff,
            created=plan.view is None,
            engine=outcome.engine,
            placement_notes=list(outcome.notes),
        )

    def _make_parents(self, target: Path, shown: str) -> None:
        parent = target.parent
        if parent.exists() and not parent.is_dir():
            raise FileAccessError(f"Cannot create '{shown}': '{self.rel(parent)}' is a file, not a folder.")
        parent.mkdir(parents=True, exist_ok=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """What a call would do: the file as read, the text the patch applies to, the result and its diff."""

    target: Path
    shown: str
    patch: str
    before: TextFile | None
    view: TextFile | None
    outcome: PatchOutcome
    diff: str


def _diff(old: str, outcome: PatchOutcome, shown: str) -> str:
    """The change as a unified diff; a byte-order mark that stays is not shown as a change of line 1."""
    if old.startswith(_BOM) and outcome.text.startswith(_BOM):
        return unified_diff(old[1:], outcome.text[1:], shown)
    edit = outcome.edit
    if edit is None:  # GNU patch's result
        return unified_diff(old, outcome.text, shown)
    return format_unified(edit.old, edit.new, edit.opcodes, shown)


def _patched_view(before: TextFile | None, patch: str) -> TextFile | None:
    """The text the patch applies to. A UTF-8 byte-order mark belongs to the first line when the patch
    carries it, as a faithful diff of such a file does (GNU patch and git work on bytes); else it is kept
    aside."""
    if before is None or before.bom != codecs.BOM_UTF8 or not _CARRIES_BOM.search(patch):
        return before
    return TextFile(text=_BOM + before.text, encoding="utf-8", bom=b"")


def _exists(target: Path) -> bool:
    return target.exists() or target.is_symlink()
