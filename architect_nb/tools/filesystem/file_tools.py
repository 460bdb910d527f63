"""Filesystem tools: read_file, write_file, delete_file and list_files.

Each takes `workspace_root` and passes every path through `validate_path` before any I/O.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import Field

from architect_nb.paths.validators import PathTraversalError, is_inside, validate_path, visible
from architect_nb.tools.base import ToolResult
from architect_nb.tools.filesystem.diffs import count_changes, unified_diff
from architect_nb.tools.filesystem.edit_file import EditFileArgs, EditFileTool
from architect_nb.tools.filesystem.file_kinds import is_binary, kind_of
from architect_nb.tools.filesystem.fileio import (
    BINARY_SNIFF_BYTES,
    FileAccessError,
    TextFile,
    atomic_write_text,
    describe_size,
    looks_binary,
    read_text_file,
)
from architect_nb.tools.tree.globs import GlobError, compile_glob, glob_matches
from architect_nb.tools.tree.walk import SKIPPED_DIR_NAMES, walk
from architect_nb.tools.workspace import PATH_HELP, ToolArgs, WorkspaceTool

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "DEFAULT_READ_LIMIT_BYTES",
    "MAX_WRITE_BYTES",
    "DeleteFileArgs",
    "DeleteFileTool",
    "EditFileArgs",
    "EditFileTool",
    "ListFilesArgs",
    "ListFilesTool",
    "ReadFileArgs",
    "ReadFileTool",
    "WriteFileArgs",
    "WriteFileTool",
]

DEFAULT_READ_LIMIT_BYTES = 256 * 1024
MAX_WRITE_BYTES = 10 * 1024 * 1024
DEFAULT_LIST_LIMIT = 500


# --------------------------------------------------------------------------- read_file


class ReadFileArgs(ToolArgs):
    path: str = Field(description=PATH_HELP)
    offset: int | None = Field(None, ge=1, description="First line to read (1-based). Use for large files.")
    limit: int | None = Field(None, ge=1, le=100_000, description="Number of lines to read from offset.")


SKILL_PREFIX = "skill:"  # `agent.conversation.skills.SKILL_PREFIX`


class ReadFileTool(WorkspaceTool):
    name = "read_file"
    reads_only = True
    description = "Read a text file. Files over 256 KB must be read in parts with offset/limit (in lines)."
    args_model = ReadFileArgs

    def __init__(self, workspace_root: Path, max_bytes: int = DEFAULT_READ_LIMIT_BYTES) -> None:
        super().__init__(workspace_root)
        self.max_bytes = max_bytes
        #: The skills' folders by name (`agent.conversation.skills`): `skill:NAME[/FILE]` reads inside that
        #: folder only.
        self.skill_folders: dict[str, Path] = {}

    def _skill_file(self, path: str) -> tuple[Path, str]:
        name, _, rest = path.removeprefix(SKILL_PREFIX).partition("/")
        folder = self.skill_folders.get(name)
        if folder is None:
            known = ", ".join(sorted(self.skill_folders)) or "none"
            raise FileAccessError(f"There is no skill {name!r}. The skills: {known}.")
        target = validate_path(rest or "SKILL.md", folder)
        return target, f"{SKILL_PREFIX}{name}/{target.relative_to(folder).as_posix()}"

    def execute(self, **kwargs: Any) -> ToolResult:
        args = ReadFileArgs.model_validate(kwargs)
        elsewhere = self.run_in_read_root(args.model_dump())
        if elsewhere is not None:
            return elsewhere
        try:
            if args.path.startswith(SKILL_PREFIX) and self.skill_folders:
                target, shown = self._skill_file(args.path)
            else:
                target = self.resolve(args.path)
                shown = self.rel(target)
            if args.offset is None and args.limit is None:
                file = read_text_file(target, shown, self.max_bytes)
                text = file.text
                lines = text.count("\n") + (not text.endswith("\n"))
                return ToolResult.ok(_with_note(text, file.note), path=shown, lines=lines)
            return self._read_part(target, shown, args.offset or 1, args.limit)
        except (PathTraversalError, FileAccessError) as exc:
            return ToolResult.fail(str(exc))

    def _read_part(self, target: Path, shown: str, offset: int, limit: int | None) -> ToolResult:
        if not target.exists():
            read_text_file(target, shown, 0)  # raises the standard "does not exist" / "is a directory" error
        with target.open("rb") as fh:
            head = fh.read(BINARY_SNIFF_BYTES)
            if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 cannot be split on b"\n"
                lines = read_text_file(target, shown, 8 * self.max_bytes).text.splitlines(keepends=True)
                return self._format_part(
                    lines[offset - 1 : offset - 1 + (limit or len(lines))], offset, len(lines)
                )
            if looks_binary(head):
                raise FileAccessError(f"'{shown}' is a binary file; it cannot be read as text.")
            fh.seek(0)
            try:
                return self._pick_lines(fh, shown, offset, limit, "utf-8")
            except UnicodeDecodeError:
                pass
            # Not UTF-8: the whole file decides its encoding (a part could mislead the detector).
            size = os.fstat(fh.fileno()).st_size
            if size > 8 * self.max_bytes:
                raise FileAccessError(
                    f"'{shown}' is not UTF-8, and at {describe_size(size)} it is too large to detect its "
                    "encoding; convert it to UTF-8 with run_command (iconv) to read it."
                )
            file = read_text_file(target, shown, 8 * self.max_bytes)
            fh.seek(0)
            part = self._pick_lines(fh, shown, offset, limit, file.encoding)
        if part.success and file.note:
            part.output = _with_note(part.output, file.note)
        return part

    def _pick_lines(
        self, fh: BinaryIO, shown: str, offset: int, limit: int | None, encoding: str
    ) -> ToolResult:
        """Lines `offset` to `offset + limit` of the open file, decoded strictly, cut to the size budget."""
        picked: list[str] = []
        budget = self.max_bytes
        total = 0
        for total, raw in enumerate(fh, start=1):
            if total < offset or (limit is not None and total >= offset + limit) or budget <= 0:
                continue
            line = (raw.removeprefix(b"\xef\xbb\xbf") if total == 1 else raw).decode(encoding)
            if len(line) > budget:
                line = line[:budget] + f" [... line {total} cut at {budget} of {len(line)} characters]\n"
            budget -= len(line)
            picked.append(line)
        if offset > max(total, 1):
            return ToolResult.fail(f"offset {offset} is past the end of '{shown}', which has {total} lines.")
        return self._format_part(picked, offset, total)

    @staticmethod
    def _format_part(lines: list[str], offset: int, total: int) -> ToolResult:
        text = "".join(lines)
        last = offset + len(lines) - 1
        if last < total:
            sep = "" if text.endswith("\n") or not text else "\n"
            text += f"{sep}[... showing lines {offset}-{last} of {total}; continue with offset={last + 1}]"
        return ToolResult.ok(text, first_line=offset, last_line=last, total_lines=total)


def _with_note(text: str, note: str) -> str:
    """`text` with `note` on a line of its own after it (nothing when there is no note)."""
    if not note:
        return text
    return text + ("" if text.endswith("\n") or not text else "\n") + note


# --------------------------------------------------------------------------- write_file


class WriteFileArgs(ToolArgs):
    path: str = Field(description=PATH_HELP)
    content: str = Field(description="The full text to write.")
    mode: Literal["overwrite", "append"] = Field(
        "overwrite", description="Replace the file or add to its end."
    )


class WriteFileTool(WorkspaceTool):
    name = "write_file"
    description = (
        "Create a file, or replace or append to one; creates missing folders. "
        "To change part of an existing file use edit_file or apply_patch."
    )
    args_model = WriteFileArgs
    sensitive = True
    mutates_files = True

    def preview(self, **kwargs: Any) -> str | None:
        args = WriteFileArgs.model_validate(kwargs)
        target = self.resolve(args.path)
        shown = self.rel(target)
        old = self._existing(target, shown, must_be_text=args.mode == "append")
        new_text = _new_text(old, args)
        diff = unified_diff(old.text if old is not None else "", new_text, shown)
        replaced = _replaced_binary(target, old)
        return f"{replaced}: it is replaced whole by this text.\n{diff}" if replaced else diff

    def execute(self, **kwargs: Any) -> ToolResult:
        args = WriteFileArgs.model_validate(kwargs)
        try:
            size = len(args.content.encode("utf-8"))
        except UnicodeEncodeError:
            return ToolResult.fail(
                "content contains unpaired surrogate characters, which UTF-8 cannot store."
            )
        if size > MAX_WRITE_BYTES:
            return ToolResult.fail(
                f"content is {describe_size(size)}; "
                f"write_file takes at most {describe_size(MAX_WRITE_BYTES)}."
            )
        try:
            target = self.resolve(args.path)
            shown = self.rel(target)
            old = self._existing(target, shown, must_be_text=args.mode == "append")
            new_text = _new_text(old, args)
            replaced = _replaced_binary(target, old)
            self._make_parents(target, shown)
            atomic_write_text(
                target, new_text, like=old, shown=shown
            )  # the old file's encoding, BOM included
        except (PathTraversalError, FileAccessError) as exc:
            return ToolResult.fail(str(exc))
        except OSError as exc:
            return ToolResult.fail(f"Could not write '{visible(args.path)}': {exc.strerror or exc}.")
        result = self._report(shown, old, new_text, args.mode)
        if replaced:
            result.output = f"{result.output} It replaced {replaced[0].lower()}{replaced[1:]}."
        return result

    @staticmethod
    def _existing(target: Path, shown: str, must_be_text: bool) -> TextFile | None:
        """The current content (None for a new file). Appending needs text; overwriting takes anything."""
        if not os.path.lexists(target):
            return None
        st = target.stat()
        if stat.S_ISDIR(st.st_mode):
            raise FileAccessError(f"'{shown}' is a directory; give a file path.")
        if not stat.S_ISREG(st.st_mode):
            raise FileAccessError(
                f"'{shown}' is not a regular file (a device, socket or pipe); it is refused."
            )
        if not st.st_mode & 0o222:
            raise FileAccessError(f"'{shown}' is read-only; it is left unchanged.")
        try:
            return read_text_file(target, shown, MAX_WRITE_BYTES)
        except FileAccessError:
            if must_be_text:
                raise
            return TextFile(text="")  # a binary or huge file being replaced: no text diff to show

    def _make_parents(self, target: Path, shown: str) -> None:
        parent = target.parent
        if parent.exists() and not parent.is_dir():
            raise FileAccessError(f"Cannot create '{shown}': '{self.rel(parent)}' is a file, not a folder.")
        parent.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _report(shown: str, old: TextFile | None, new_text: str, mode: str) -> ToolResult:
        n_lines = new_text.count("\n") + (bool(new_text) and not new_text.endswith("\n"))
        if old is None:
            diff = unified_diff("", new_text, shown)
            return ToolResult.ok(f"Created {shown} ({n_lines} lines).", path=shown, diff=diff, created=True)
        diff = unified_diff(old.text, new_text, shown)
        added, removed = count_changes(diff)
        verb = "Appended to" if mode == "append" else "Wrote"
        return ToolResult.ok(
            f"{verb} {shown} (+{added} -{removed} lines).", path=shown, diff=diff, created=False
        )


def _replaced_binary(target: Path, old: TextFile | None) -> str:
    """What a write replaces when the file there is not text (binary, or too large to read): described, as
    its diff cannot show it; '' otherwise."""
    if old is None or old.text or not os.path.isfile(target):
        return ""
    try:
        size = target.stat().st_size
        with open(target, "rb") as f:
            head = f.read(BINARY_SNIFF_BYTES)
    except OSError:
        return ""
    if not size:
        return ""
    if is_binary(head):
        return f"A binary file ({kind_of(target.name, head)}, {describe_size(size)})"
    return f"A file that is not read as text ({describe_size(size)})"


def _new_text(old: TextFile | None, args: WriteFileArgs) -> str:
    """The file's text after the write: an existing CRLF file keeps CRLF line endings."""
    content = args.content
    if old is not None and old.newline == "\r\n":
        content = content.replace("\r\n", "\n").replace("\n", "\r\n")
    return old.text + content if (old is not None and args.mode == "append") else content


# --------------------------------------------------------------------------- delete_file


class DeleteFileArgs(ToolArgs):
    path: str = Field(description=PATH_HELP)


class DeleteFileTool(WorkspaceTool):
    name = "delete_file"
    description = "Delete one file (not a folder). Only works if the workspace allows deletion."
    args_model = DeleteFileArgs
    sensitive = True
    mutates_files = True

    def __init__(self, workspace_root: Path, allow_delete: bool = False) -> None:
        super().__init__(workspace_root)
        self.allow_delete = allow_delete

    def execute(self, **kwargs: Any) -> ToolResult:
        args = DeleteFileArgs.model_validate(kwargs)
        if not self.allow_delete:
            return ToolResult.fail(
                "Deleting files is disabled in this workspace (workspace.allow_delete is false). "
                "Leave the file, or ask the user to enable deletion."
            )
        try:
            target = self.resolve(args.path)
            shown = self.rel(target)
            # A symlink inside the workspace is removed itself, never its target.
            lexical = Path(os.path.normpath(self.workspace_root / args.path))
            victim = lexical if lexical.is_symlink() else target
            if target == self.workspace_root:
                return ToolResult.fail("The workspace root cannot be deleted.")
            if not os.path.lexists(victim):
                return ToolResult.fail(f"'{shown}' does not exist; nothing was deleted.")
            if victim.is_dir() and not victim.is_symlink():
                return ToolResult.fail(f"'{shown}' is a folder; delete_file removes single files only.")
            victim.unlink()
        except PathTraversalError as exc:
            return ToolResult.fail(str(exc))
        except OSError as exc:
            return ToolResult.fail(f"Could not delete '{args.path}': {exc.strerror or exc}.")
        return ToolResult.ok(f"Deleted {shown}.", path=shown)


# --------------------------------------------------------------------------- list_files


class ListFilesArgs(ToolArgs):
    path: str = Field(".", description="Folder to list.")
    pattern: str | None = Field(
        None, description="Glob on names ('*.py') or on paths below `path` ('src/**/*.ts')."
    )
    recursive: bool = Field(False, description="Include subfolders.")


class ListFilesTool(WorkspaceTool):
    name = "list_files"
    reads_only = True
    description = "List files and folders (folders end in '/')."
    args_model = ListFilesArgs

    def __init__(self, workspace_root: Path, max_entries: int = DEFAULT_LIST_LIMIT) -> None:
        super().__init__(workspace_root)
        self.max_entries = max_entries

    def execute(self, **kwargs: Any) -> ToolResult:
        args = ListFilesArgs.model_validate(kwargs)
        elsewhere = self.run_in_read_root(args.model_dump(), lists_paths=True)
        if elsewhere is not None:
            return elsewhere
        try:
            start = self.resolve(args.path)
            if args.pattern is not None:
                compile_glob(args.pattern)
        except (PathTraversalError, GlobError) as exc:
            return ToolResult.fail(str(exc))
        shown_start = self.rel(start)
        if not start.exists():
            return ToolResult.fail(f"'{shown_start}' does not exist. List '.' to see the workspace.")
        if not start.is_dir():
            return ToolResult.fail(f"'{shown_start}' is a file, not a folder; use read_file to read it.")
        pattern = args.pattern
        recursive = args.recursive or (pattern is not None and ("/" in pattern or "**" in pattern))
        entries = self._collect(start, pattern, recursive)
        return self._format(entries, shown_start, pattern)

    def _collect(self, start: Path, pattern: str | None, recursive: bool) -> tuple[list[str], int]:
        shown: list[str] = []
        total = 0
        start_rel = "" if start == self.workspace_root else self.rel(start)
        for entry in walk(self.workspace_root, start, recursive=recursive, include_dirs=not pattern):
            is_dir = entry.is_dir
            if entry.is_symlink:
                target = Path(os.path.realpath(entry.path))
                if not is_inside(target, self.workspace_root) or not target.exists():
                    continue  # never show (or invite reading) a link that leads out of the workspace
                is_dir = target.is_dir()
            below = entry.rel[len(start_rel) + 1 :] if start_rel else entry.rel
            if pattern is not None and (is_dir or not glob_matches(pattern, below)):
                continue
            total += 1
            if len(shown) < self.max_entries:
                shown.append(visible(entry.rel) + ("/" if is_dir else ""))  # a name's hidden characters too
        return shown, total

    def _format(self, collected: tuple[list[str], int], shown_start: str, pattern: str | None) -> ToolResult:
        shown, total = collected
        if not shown:
            what = f"matching {visible(pattern)!r} " if pattern else ""
            return ToolResult.ok(
                f"No files {what}in '{shown_start}' (skipped: {', '.join(sorted(SKIPPED_DIR_NAMES)[:4])}, "
                "virtualenvs, caches and .gitignored paths).",
                entries=[],
                total=0,
            )
        text = "\n".join(shown)
        if total > len(shown):
            text += f"\n... and {total - len(shown)} more; narrow with `pattern` or a subfolder `path`."
        return ToolResult.ok(text, entries=shown, total=total)
