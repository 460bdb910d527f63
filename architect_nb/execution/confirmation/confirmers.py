"""Asking a person: the `Confirmer` protocol, what it is asked (`ConfirmationRequest`) and what it answers.

The engine calls `confirmer.confirm(request)` synchronously on whatever thread runs the tool call (the
notebook runs the agent in a worker thread, and its widget confirmer waits there for a click). The request is
immutable and self-contained, so a confirmer needs no access to the engine, and the engine holds no lock while
a person thinks. Everything a confirmer shows should come from `request.render()`, `request.shown_args()` or
`show()`, which make control characters, ANSI escapes, bidi overrides and zero-width characters visible, so
an approval screen cannot be spoofed by the arguments.

Three confirmers: `TerminalConfirmer` (y/n/a on a TTY), `ScriptedConfirmer` (tests), and the notebook's
widget confirmer (in the notebook layer).
"""

from __future__ import annotations

import copy
import enum
import json
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import IO, Any, Protocol, runtime_checkable

from architect_nb.execution.confirmation.policy import CommandCheck, NoTTYError
from architect_nb.paths.validators import visible
from architect_nb.redaction import default_redactor

__all__ = [
    "Approval",
    "ConfirmationAnswer",
    "ConfirmationRequest",
    "Confirmer",
    "ScriptExhaustedError",
    "ScriptedConfirmer",
    "TerminalConfirmer",
    "like_key",
    "sensitivity_of",
    "show",
    "show_block",
]

_EXTRA_INVISIBLE = frozenset("\u2028\u2029\u0085")  # line and paragraph separators break lines too


def show(text: str) -> str:
    """`text` on one line with every control, ANSI, bidi, zero-width and line-breaking character escaped."""
    out = visible(text)
    if any(ch in _EXTRA_INVISIBLE for ch in out):
        out = "".join(f"\\u{ord(ch):04x}" if ch in _EXTRA_INVISIBLE else ch for ch in out)
    return out


def show_block(text: str) -> str:
    """Like `show`, but keeps line breaks (and tabs), for diffs and multi-line text."""
    return "\n".join(show(line).replace("\\x09", "\t") for line in text.split("\n"))


class Approval(enum.StrEnum):
    APPROVE = "approve"
    DENY = "deny"
    ABORT = "abort"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmationAnswer:
    """A person's answer, or the safe default when nobody gave one. A `reason` given with a denial reaches
    the model."""

    decision: Approval
    reason: str = ""
    #: Nobody answered: a denial by default (no front end, a timeout, a cancelled prompt, no allow rule in an
    #: unattended run), told to the model as that and never as the person's word.
    by_default: bool = False

    @classmethod
    def approve(cls) -> ConfirmationAnswer:
        return cls(decision=Approval.APPROVE)

    @classmethod
    def deny(cls, reason: str = "") -> ConfirmationAnswer:
        return cls(decision=Approval.DENY, reason=reason)

    @classmethod
    def unanswered(cls, reason: str) -> ConfirmationAnswer:
        """The denial a question gets when nobody answers it; `reason` says why."""
        return cls(decision=Approval.DENY, reason=reason, by_default=True)

    @classmethod
    def abort(cls, reason: str = "") -> ConfirmationAnswer:
        return cls(decision=Approval.ABORT, reason=reason)

    @classmethod
    def parse(cls, value: ConfirmationAnswer | Approval | str | bool) -> ConfirmationAnswer:
        """Accepts an answer, an `Approval`, True/False, or text: 'y', 'n', 'a', 'deny: use a test file'."""
        if isinstance(value, ConfirmationAnswer):
            return value
        if isinstance(value, bool):
            return cls.approve() if value else cls.deny()
        word, _, reason = str(value).partition(":")
        key = word.strip().lower()
        for decision, words in _WORDS.items():
            if key in words:
                return cls(decision=decision, reason=reason.strip())
        raise ValueError(f"Unknown answer {value!r}; use approve/y, deny/n or abort/a.")


_WORDS = {
    Approval.APPROVE: {"approve", "y", "yes", "allow"},
    Approval.DENY: {"deny", "n", "no"},
    Approval.ABORT: {"abort", "a", "q", "quit"},
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmationRequest:
    """Everything a person needs to approve one call, computed before asking.

    Attributes:
        tool_name: The tool to run.
        args: The validated arguments (after any hook rewrite), read-only.
        sensitivity: 'safe'/'dev'/'dangerous' for commands, 'sensitive' or 'normal' for other tools.
        preview: For edits, the unified diff the call would make (None if it cannot be computed).
        code: For tools that run code in the kernel (run_python), the code, shown whole and highlighted.
        command: For run_command, how the command was classified.
        reasons: Why approval is asked (the mode, a hook that asked).
        warnings: Hook and guardrail warnings raised so far.
        undo: What undo could not restore of this call, when that is known before it runs ("" otherwise).
        run_id: The run this call belongs to.
        call_id: The model's id for the call, or its id in the audit log when no model made it.
    """

    tool_name: str
    args: Mapping[str, Any]
    sensitivity: str
    preview: str | None = None
    code: str | None = None
    command: CommandCheck | None = None
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    undo: str = ""
    run_id: str = ""
    call_id: str = ""

    def __post_init__(self) -> None:
        # A deep copy: nothing a confirmer does to what it is shown can change what runs.
        object.__setattr__(self, "args", MappingProxyType(copy.deepcopy(dict(self.args))))

    def shown_args(self, limit: int = 2000) -> str:
        """The arguments as `name=value` lines, each value JSON-quoted, redacted (before any cut) and escaped
        by `show`."""
        lines = []
        for key, value in self.args.items():
            if key == "code" and self.code is not None:
                continue  # shown whole, as code, below the arguments
            text = default_redactor().redact(json.dumps(value, ensure_ascii=False, default=str))
            if len(text) > limit:
                text = text[:limit] + f"... [{len(text) - limit} more characters]"
            lines.append(f"  {show(str(key))}={show(text)}")
        return "\n".join(lines)

    def render(self) -> str:
        """The whole question as plain text, safe to print."""
        parts = [f"{show(self.tool_name)} ({self.sensitivity})", self.shown_args()]
        if self.command is not None:
            parts.append(f"  command: {show(self.command.command)} [{self.command.sensitivity}]")
        parts += [f"  why: {show(r)}" for r in self.reasons]
        parts += [f"  warning: {show(w)}" for w in self.warnings]
        if self.undo:
            parts.append(f"  undo: {show(self.undo)}")
        if self.code:
            parts.append("code:\n" + show_block(self.code.rstrip("\n")))
        if self.preview:
            parts.append(show_block(self.preview.rstrip("\n")))
        return "\n".join(p for p in parts if p)


@runtime_checkable
class Confirmer(Protocol):
    """Asks a person about one call and returns their answer.

    Called on the thread that runs the tool call (a worker thread in the notebook); may block until the
    person answers, and should give up with a denial after a timeout when nobody answers (a headless
    notebook run never clicks). It should not raise; if it does, the engine refuses the call and reports the
    error. `NoTTYError` means there is nobody to ask. Abort answers stop the whole run.
    """

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer: ...


class TerminalConfirmer:
    """The design document's prompt: `Run 'write_file'? [y/n/a]`. 'n' may be followed by a reason.

    Raises `NoTTYError` when `stdin` is not a terminal. End of input counts as abort.
    """

    def __init__(
        self,
        *,
        stdin: IO[str] | None = None,
        stdout: IO[str] | None = None,
        read: Callable[[], str] | None = None,
    ) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._read = read
        self._lock = threading.Lock()  # one question at a time on one terminal

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        stdin = self._stdin or sys.stdin
        stdout = self._stdout or sys.stderr
        if self._read is None and (stdin is None or not stdin.isatty()):
            raise NoTTYError()
        read = self._read or stdin.readline
        with self._lock:
            stdout.write(request.render() + "\n")
            for _ in range(3):
                stdout.write(f"Run {show(request.tool_name)!r}? [y]es / [n]o[: reason] / [a]bort run: ")
                stdout.flush()
                line = read()
                if not line:
                    return ConfirmationAnswer.abort("end of input")
                try:
                    return ConfirmationAnswer.parse(line.strip())
                except ValueError:
                    stdout.write("Please answer y, n or a.\n")
        return ConfirmationAnswer.deny("no valid answer was given")


class ScriptExhaustedError(RuntimeError):
    """A `ScriptedConfirmer` was asked more questions than it had answers."""


@dataclass
class ScriptedConfirmer:
    """Answers from a script, for tests; records every request it was shown in `requests`.

    Args:
        answers: Answers in order (`ConfirmationAnswer`, `Approval`, bools or text such as 'deny: reason').
        default: The answer once the script runs out; without one, running out raises
            `ScriptExhaustedError` (which the engine reports as a refused call).
    """

    answers: Iterable[ConfirmationAnswer | Approval | str | bool] = ()
    default: ConfirmationAnswer | Approval | str | bool | None = None
    requests: list[ConfirmationRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue = [ConfirmationAnswer.parse(a) for a in self.answers]
        self._default = None if self.default is None else ConfirmationAnswer.parse(self.default)
        self._lock = threading.Lock()

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.pop(0)
        if self._default is not None:
            return self._default
        raise ScriptExhaustedError(
            f"The scripted confirmer has no answer left for {request.tool_name} "
            f"(question {len(self.requests)})."
        )


def sensitivity_of(tool_sensitive: bool, command: CommandCheck | None) -> str:
    """The label shown to the person: a command's class, or 'sensitive'/'normal'."""
    if command is not None:
        return command.sensitivity
    return "sensitive" if tool_sensitive else "normal"


def like_key(request: ConfirmationRequest) -> str:
    """What "Approve all like this" covers: the same tool, and for commands the same program and class."""
    if request.command is not None:
        program = (request.command.command.split() or [""])[0]
        return f"{request.tool_name}:{program}:{request.command.sensitivity}"
    return request.tool_name
