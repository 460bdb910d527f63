"""The project's own instructions: `AGENTS.md` and `CLAUDE.md`, into the system prompt, within a size cap.

The files at the workspace root (and those `instructions.files` names) go into the system prompt of every
run. A subfolder's own files are read the first time a tool touches a path in it, and told to the model then
(`for_paths`): a monorepo's packages each keep their rules, and a run that never goes there never pays for
them. Every file passes the workspace sandbox (`validate_path`, so a symlink out of the workspace is refused),
must be UTF-8 text and not huge, and is redacted before the model sees it. A file that fails is left out with
a message saying why; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from architect_nb.config.schema import InstructionsConfig
from architect_nb.paths.validators import PathTraversalError, is_inside, validate_path
from architect_nb.redaction import default_redactor

__all__ = [
    "INSTRUCTION_NAMES",
    "MAX_FILE_BYTES",
    "InstructionFile",
    "ProjectInstructions",
    "size_text",
    "system_prompt_with",
]

INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_FILE_BYTES = 256 * 1024  # bigger is not a set of instructions; reading it would only cost tokens
_NOTE_HEAD = "[Project instructions for {folder}/ ({paths}); they apply to files there.]"


@dataclass(frozen=True, kw_only=True)
class InstructionFile:
    """One instruction file as the model gets it: redacted, and cut if the cap was reached."""

    path: str  # relative to the workspace root, with '/'
    text: str
    chars: int  # its whole length, before any cut
    cut: bool = False

    def label(self) -> str:
        return f"{self.path} ({size_text(self.chars)}{', cut' if self.cut else ''})"


def size_text(chars: int) -> str:
    return f"{chars:,} chars" if chars < 10_000 else f"{chars / 1000:.0f}k chars"


class ProjectInstructions:
    """The instruction files of one workspace, read as a run needs them; each at most once per run.

    Args:
        root: The workspace root.
        config: `instructions:` of `.architect.yaml` (on or off, extra files, the cap).
    """

    def __init__(self, root: Path, config: InstructionsConfig | None = None) -> None:
        self.root = root.resolve()
        self.config = config or InstructionsConfig()
        self._left = self.config.max_chars
        self._seen_folders: set[str] = set()
        self.problems: list[str] = []  # what was left out, and why: shown as warnings

    def at_start(self, already_told: Iterable[Mapping[str, Any]] = ()) -> list[InstructionFile]:
        """The root's files and the configured ones, for the system prompt. `already_told`: messages of the
        thread, so a subfolder told in an earlier run is not told again."""
        self._left, self.problems = self.config.max_chars, []
        self._seen_folders = {""} | _folders_told(already_told)
        if not self.config.enabled:
            return []
        names = [*INSTRUCTION_NAMES, *self.config.files]
        return self._read_all(names, missing_ok=set(INSTRUCTION_NAMES))

    def for_paths(self, paths: Sequence[str]) -> tuple[list[InstructionFile], str | None]:
        """Files of the subfolders `paths` lie in that were not read yet, and the note that tells them."""
        if not self.config.enabled:
            return [], None
        found: list[InstructionFile] = []
        notes: list[str] = []
        for folder in self._new_folders(paths):
            files = self._read_all([f"{folder}/{n}" for n in INSTRUCTION_NAMES], missing_ok=None)
            if files:
                head = _NOTE_HEAD.format(folder=folder, paths=", ".join(f.path for f in files))
                notes.append("\n\n".join([head, *(f.text for f in files)]))
                found += files
        return found, "\n\n".join(notes) or None

    def _new_folders(self, paths: Sequence[str]) -> list[str]:
        folders: list[str] = []
        for path in paths:
            try:
                resolved = validate_path(path, self.root)
            except PathTraversalError:
                continue  # the tool itself says what is wrong with the path
            folder = resolved if resolved.is_dir() else resolved.parent
            if not is_inside(folder, self.root):
                continue
            parts = folder.relative_to(self.root).parts
            for depth in range(1, len(parts) + 1):  # outer folders first: their rules frame the inner ones
                name = PurePosixPath(*parts[:depth]).as_posix()
                if name not in self._seen_folders:
                    self._seen_folders.add(name)
                    folders.append(name)
        return folders

    def _read_all(self, names: Sequence[str], missing_ok: set[str] | None) -> list[InstructionFile]:
        files = []
        for name in names:
            file = self._read(name, quiet_if_missing=missing_ok is None or name in missing_ok)
            if file is not None:
                files.append(file)
        return files

    def _read(self, name: str, *, quiet_if_missing: bool) -> InstructionFile | None:
        try:
            path = validate_path(name, self.root)
        except PathTraversalError as exc:
            self.problems.append(f"Instructions {name} left out: {exc}")
            return None
        if not path.is_file():
            if not quiet_if_missing or path.exists():
                self.problems.append(f"Instructions {name} left out: it is not a file in the workspace.")
            return None
        rel = path.relative_to(self.root).as_posix()
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                self.problems.append(
                    f"Instructions {rel} left out: it is {size:,} bytes; an instruction file may have "
                    f"{MAX_FILE_BYTES:,} at most."
                )
                return None
            data = path.read_bytes()
        except OSError as exc:
            self.problems.append(f"Instructions {rel} left out: it cannot be read ({exc.strerror}).")
            return None
        try:
            if b"\x00" in data:
                raise UnicodeDecodeError("utf-8", data, data.index(b"\x00"), data.index(b"\x00") + 1, "NUL")
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            self.problems.append(f"Instructions {rel} left out: it is not UTF-8 text.")
            return None
        text = default_redactor().redact(text.strip())
        if not text:
            return None
        return self._within_cap(rel, text)

    def _within_cap(self, rel: str, text: str) -> InstructionFile | None:
        if self._left <= 0:
            self.problems.append(
                f"Instructions {rel} left out: the instructions already fill instructions.max_chars "
                f"({self.config.max_chars:,})."
            )
            return None
        chars = len(text)
        if chars <= self._left:
            self._left -= chars
            return InstructionFile(path=rel, text=text, chars=chars)
        kept = text[: self._left]
        self._left = 0
        self.problems.append(
            f"Instructions {rel} cut to {len(kept):,} of {chars:,} characters (instructions.max_chars is "
            f"{self.config.max_chars:,})."
        )
        marker = f"\n[... the rest of {rel} was cut: {chars - len(kept):,} more characters ...]"
        return InstructionFile(path=rel, text=kept + marker, chars=chars, cut=True)


def system_prompt_with(prompt: str, files: Sequence[InstructionFile]) -> str:
    """The agent's prompt followed by the project's instructions."""
    if not files:
        return prompt
    parts = [prompt, "# Project instructions\nThe project's instruction files follow; follow them."]
    parts += [f"## {file.path}\n{file.text}" for file in files]
    return "\n\n".join(parts)


def _folders_told(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """Subfolders whose instructions an earlier run of the thread already told the model."""
    prefix = "[Project instructions for "
    folders = set()
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) and content.startswith(prefix):
            for block in content.split("\n\n"):
                if block.startswith(prefix) and "/ (" in block:
                    folders.add(block[len(prefix) : block.index("/ (")])
    return folders
