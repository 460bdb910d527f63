"""`GuardrailsEngine`: deterministic rules checked before any hook runs. The model can never turn them off.

Every check returns `(allowed, reason)`; the reason is a sentence for the model. What each rule covers:

* **Protected files** (globs): no tool may write, edit, patch or delete them; `run_command` may not change
  one it names (`> f`, `tee`, `rm`, `mv`, `cp`, `sed -i`, `chmod`, `tar -f`, `git checkout -- f`, ...),
  and, unless it runs in the OS sandbox, which makes them read-only, not one it does not name plainly
  either (globs, variables, links, inline code, `find -delete`, archives, patches, git: `protected_writes`).
* **Sensitive files** (globs): protected, and not readable either: `read_file` and any tool whose `path`
  names one is refused, a command that mentions one (`cat .env`, `open('.env')`) is refused, a command
  that reads one without naming it (`grep -r KEY .`, `cat config/*`, `find . -exec cat {} +`) is refused
  unless it runs in the OS sandbox, which hides them (`unnamed_reads`), and lines of search output
  (`path:line:...`) that come from one are withheld (`filter_output`).
* **Blocked commands**: regexes (plain text works) searched in the command.
* **Limits** per run: commands executed, files modified, lines changed (counted from the preview diff).
* **Code rules**: regexes checked on the text a call is about to write; `warn` or `block`.

Globs match the path relative to the workspace, each of its parent folders, and the file name, ignoring case:
over-matching a protected path is the safe mistake. Commands are judged on the shell's own parse (the one the
classifier reads), word by word as bash will see them; a program that finds a file by itself (the project's
code, a script) is beyond them, which is the sandbox's work. What a command changes in the workspace is
snapshotted for undo.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from architect_nb.config.schema import GuardrailsConfig
from architect_nb.execution.guardrails.guarded_files import GuardedFiles
from architect_nb.execution.guardrails.mentions import code_names, mentioned
from architect_nb.execution.guardrails.reads.unnamed_reads import unnamed_read
from architect_nb.execution.guardrails.shell_runs import Run, runs
from architect_nb.execution.guardrails.writes.protected_writes import ProtectedFiles, protected_write
from architect_nb.log import get_logger
from architect_nb.paths.globs import PathGlobs
from architect_nb.tools.commands.classifier import MAX_COMMAND_CHARS
from architect_nb.tools.commands.shell_parse import ParsedScript, parse_command
from architect_nb.tools.commands.workspace_scan import ScanLimitError, WorkspaceMasks, WorkspaceScanner

__all__ = ["CodeRuleHit", "CommandJudgement", "GuardrailsEngine"]

_GREP_LINE = re.compile(r"^(?P<path>[^\n:]+?)(?::|-)(?P<line>\d+)(?::|-)")
# Notebook hits name the cell: `nb.ipynb [cell 3, line 2]: ...` or `nb.ipynb [cell 3, output 0, line 1]- ...`.
_NOTEBOOK_LINE = re.compile(r"^(?P<path>[^\n]+?) \[cell \d+(?:, output \d+)?, line \d+\](?::|-)")


@dataclass(frozen=True, slots=True)
class CommandJudgement:
    """The guardrails' answer about a command: refused with `reason`, or allowed, maybe only if a person
    approves it (`ask`: why; the engine refuses it in yolo, where nobody is asked)."""

    allowed: bool = True
    reason: str = ""
    ask: str | None = None

    @classmethod
    def refused(cls, reason: str) -> CommandJudgement:
        return cls(allowed=False, reason=reason)


@dataclass(frozen=True, slots=True)
class CodeRuleHit:
    severity: str
    message: str
    pattern: str


class GuardrailsEngine:
    """Deterministic rules with per-run counters. Thread-safe.

    Args:
        config: The `guardrails:` section.
        workspace_root: Paths are judged relative to it.
        read_roots: `workspace.read_roots`: commands may not change what they name in them; sensitive files
            in them are matched relative to the read root.
    """

    def __init__(
        self, config: GuardrailsConfig, workspace_root: Path, *, read_roots: Sequence[Path] = ()
    ) -> None:
        self.config = config
        self.workspace_root = Path(os.path.realpath(workspace_root))
        self.read_roots = tuple(os.path.realpath(r) for r in read_roots)
        self._root_text = str(self.workspace_root)
        self._root_prefix = self._root_text.rstrip("/") + "/"
        self.protected = PathGlobs(config.protected_files)
        self.sensitive = PathGlobs(config.sensitive_files)
        self._blocked = [(_compile(p), p) for p in config.blocked_commands]
        self._rules = [(_compile(r.pattern), r) for r in config.code_rules]
        self._lock = threading.Lock()
        self._scanner: WorkspaceScanner | None = None  # made on the first command that needs it
        self.commands_executed = 0
        self.files_modified: set[str] = set()
        self.lines_changed = 0

    def reset(self) -> None:
        """Start counting a new run."""
        with self._lock:
            self.commands_executed = 0
            self.files_modified = set()
            self.lines_changed = 0

    # ------------------------------------------------------------------ files

    def relative(self, path: Path | str) -> str:
        """`path` relative to the workspace, with '/' separators (unchanged if it lies outside)."""
        text = os.fspath(path)
        if text.startswith(self._root_prefix):
            return text[len(self._root_prefix) :]
        return "." if text == self._root_text else text

    def _in_read_root(self, path: str) -> str | None:
        """`path` relative to the read root it lies in, or None."""
        for root in self.read_roots:
            if path.startswith(root.rstrip("/") + "/"):
                return path[len(root.rstrip("/")) + 1 :]
        return None

    def check_file_access(self, path: Path | str, tool_name: str, *, write: bool) -> tuple[bool, str]:
        """May `tool_name` read (or, with `write`, change) `path`? In a read root, sensitive files match
        relative to it."""
        rel = self.relative(path)
        hit = self.sensitive.match(self._in_read_root(rel) or rel)
        if hit is not None:
            return False, (
                f"'{rel}' is a sensitive file (matches '{hit}'); {tool_name} may not read or change it. "
                "Work without its contents, or ask the user to supply what you need."
            )
        if write:
            hit = self.protected.match(rel)
            if hit is not None:
                return False, (
                    f"'{rel}' is a protected file (matches '{hit}'); {tool_name} may not change it. "
                    "Leave it as it is and change another file, or ask the user."
                )
        return True, ""

    def filter_output(self, text: str) -> tuple[str, int]:
        """Drop search-result lines (`path:line:`, `path-line-`, `nb.ipynb [cell 3, line 2]:`) from sensitive
        files."""
        if not self.sensitive or not text:
            return text, 0
        kept: list[str] = []
        withheld = 0
        for line in text.splitlines(keepends=True):
            m = _NOTEBOOK_LINE.match(line) or _GREP_LINE.match(line)
            if m is not None and self.sensitive.match(self.relative(m.group("path"))) is not None:
                withheld += 1
            else:
                kept.append(line)
        if not withheld:
            return text, 0
        note = f"[guardrails: {withheld} line(s) from sensitive files withheld]"
        return "".join(kept).rstrip("\n") + ("\n" if kept else "") + note, withheld

    # ------------------------------------------------------------------ commands

    def check_command(
        self, command: str, cwd: Path | None = None, *, sandboxed: bool = False
    ) -> tuple[bool, str]:
        """Is `command` allowed: not blocked, under the per-run limit, not touching guarded files?
        `sandboxed`: it runs in the OS sandbox, where sensitive files are hidden from it and protected ones
        are read-only. (A command the check cannot decide is allowed here: `judge_command` says to ask.)"""
        judged = self.judge_command(command, cwd, sandboxed=sandboxed)
        return judged.allowed, judged.reason

    def judge_command(
        self, command: str, cwd: Path | None = None, *, sandboxed: bool = False
    ) -> CommandJudgement:
        """`check_command`, and whether an allowed command must be asked about (`ask`)."""
        limit = self.config.max_commands_executed
        if limit is not None and self.commands_executed >= limit:
            return CommandJudgement.refused(
                f"This run has already executed {self.commands_executed} commands, the limit "
                f"(guardrails.max_commands_executed = {limit}). Finish with what you have."
            )
        for regex, pattern in self._blocked:
            if regex.search(command):
                return CommandJudgement.refused(
                    f"The command matches the blocked pattern '{pattern}' and is never run. "
                    "Use another way, or ask the user to run it."
                )
        if not (self.sensitive or self.protected or self.read_roots):
            return CommandJudgement()
        base = Path(os.path.realpath(cwd)) if cwd is not None else self.workspace_root
        if len(command) > MAX_COMMAND_CHARS:
            return CommandJudgement.refused(
                f"The command is longer than {MAX_COMMAND_CHARS} characters, too long to check for protected "
                "and sensitive files. Split it into shorter commands."
            )
        try:
            script = parse_command(command)
        except UnicodeError:
            return CommandJudgement.refused(
                "The command holds characters that cannot be passed to bash. Write it in plain text."
            )
        try:
            every = runs(script, str(base))
            scripts = list({id(s): s for s in [script, *(r.script for r in every)]}.values())
            reason = self._sensitive_reason(script, scripts, every, sandboxed=sandboxed)
            ask = None
            if reason is None and (self.protected or self.read_roots):
                guard = ProtectedFiles(
                    self._root_text,
                    self.protected,
                    self._protected_now,
                    unnamed=not sandboxed,
                    read_roots=self.read_roots,
                )
                judged = protected_write(scripts, every, guard)
                reason, ask = judged.refusal, judged.doubt
        except ScanLimitError as exc:
            reason = (
                f"The command may touch files it does not name, and the workspace cannot be checked for "
                f"sensitive and protected files: {exc} Name the files you need."
            )
        except Exception as exc:  # a bug in a model must not let the command through, nor raise
            get_logger(__name__).warning("guardrail_check_failed", problem=f"{type(exc).__name__}: {exc}")
            reason = (
                f"The command could not be checked for sensitive and protected files ({type(exc).__name__}). "
                "Write it more plainly, or ask the user."
            )
        if reason is not None:
            return CommandJudgement.refused(reason)
        return CommandJudgement(ask=ask)

    def _sensitive_reason(
        self, script: ParsedScript, scripts: list[ParsedScript], every: list[Run], *, sandboxed: bool
    ) -> str | None:
        if not self.sensitive:
            return None
        bases = list(dict.fromkeys(b for run in every for b in run.bases)) or [str(self.workspace_root)]
        for name in dict.fromkeys(mentioned(scripts)):
            for base in bases:
                hit = self.sensitive.match(self._rel_word(name, Path(base)))
                if hit is not None:
                    return (
                        f"The command mentions '{name}', a sensitive file (matches '{hit}'), which "
                        "commands may not read or change. Work without it."
                    )
        return None if sandboxed else unnamed_read(script, every, self._sensitive_now)

    def record_command(self) -> None:
        with self._lock:
            self.commands_executed += 1

    def check_code(self, code: str) -> tuple[bool, str]:
        """Is Python `code` (run_python's) allowed: no blocked pattern, no sensitive file named in it?

        Lexical, as for commands: it catches the code an agent writes, not a program hiding a name."""
        for regex, pattern in self._blocked:
            if regex.search(code):
                return False, (
                    f"The code matches the blocked pattern '{pattern}' and is never run. "
                    "Use another way, or ask the user to run it."
                )
        if self.sensitive:
            for word in code_names(code):
                hit = self.sensitive.match(self._rel_word(word, self.workspace_root))
                if hit is not None:
                    return False, (
                        f"The code mentions '{word}', a sensitive file (matches '{hit}'), which no tool "
                        "may read. Work without it."
                    )
        return True, ""

    def _masks(self) -> WorkspaceMasks:
        with self._lock:
            if self._scanner is None:
                self._scanner = WorkspaceScanner(self.workspace_root, self.sensitive, self.protected)
            scanner = self._scanner
        return scanner.scan()

    def _sensitive_now(self) -> GuardedFiles:
        masks = self._masks()
        return GuardedFiles.of(
            self._root_text,
            masks.masked_files,
            masks.masked_folders,
            lambda rel: self.sensitive.match(rel) is not None,
        )

    def _protected_now(self) -> GuardedFiles:
        read_only = self._masks().read_only
        return GuardedFiles.of(
            self._root_text,
            [p for p in read_only if not os.path.isdir(p)],
            [p for p in read_only if os.path.isdir(p)],
            lambda rel: self.protected.match(rel) is not None,
        )

    def _rel_word(self, word: str, base: Path) -> str:
        return self.relative(os.path.normpath(base / word))

    # ------------------------------------------------------------------ edits

    def check_edit_limits(self, path: Path | str, lines_added: int, lines_removed: int) -> tuple[bool, str]:
        """Would this change push the run over `max_files_modified` or `max_lines_changed`?"""
        rel = self.relative(path)
        max_files = self.config.max_files_modified
        if max_files is not None and rel not in self.files_modified and len(self.files_modified) >= max_files:
            return False, (
                f"This run has already modified {len(self.files_modified)} files, the limit "
                f"(guardrails.max_files_modified = {max_files}); '{rel}' would be one more. "
                "Finish with the files already changed, or ask the user to raise the limit."
            )
        max_lines = self.config.max_lines_changed
        change = lines_added + lines_removed
        if max_lines is not None and self.lines_changed + change > max_lines:
            return False, (
                f"This change touches {change} lines and the run has changed {self.lines_changed}; the limit "
                f"is {max_lines} (guardrails.max_lines_changed). Make a smaller change."
            )
        return True, ""

    def record_edit(self, path: Path | str, lines_added: int, lines_removed: int) -> None:
        with self._lock:
            self.files_modified.add(self.relative(path))
            self.lines_changed += lines_added + lines_removed

    def check_code_rules(self, content: str) -> list[CodeRuleHit]:
        """The code rules that `content` (text about to be written) breaks."""
        return [
            CodeRuleHit(rule.severity, rule.message, rule.pattern)
            for regex, rule in self._rules
            if regex.search(content)
        ]


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error:
        return re.compile(re.escape(pattern))
