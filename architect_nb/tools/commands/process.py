"""Running one command (layers 3 and 4 of run_command): its own process group, a deadline, bounded output.

The process starts in a new session, so a timeout kills it and everything it started (`os.killpg`). Output is
read while it streams: the first lines and the last lines are kept, the middle is only counted, and each kept
line is cut at `line_bytes`. Memory stays bounded whatever the command prints (`yes`, `cat /dev/urandom`).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from architect_nb.process_group import kill_group, process_group
from architect_nb.redaction import default_redactor

__all__ = ["OutputBuffer", "ProcessOutcome", "kill_running_processes", "run_process"]

#: After the main process exits, how long leftovers (background jobs) may keep the pipe open.
EXIT_GRACE_SECONDS = 0.5

# The process groups of the commands running now, so an interrupt on another thread can kill them.
_live_lock = threading.Lock()
_live_groups: set[int] = set()


def kill_running_processes() -> int:
    """Kill the process group of every command `run_process` runs now (thread-safe); returns how many."""
    with _live_lock:
        groups = list(_live_groups)
    for pgid in groups:
        kill_group(pgid)
    return len(groups)


@contextlib.contextmanager
def _tracked(proc: subprocess.Popen[bytes]) -> Iterator[None]:
    with _live_lock:
        _live_groups.add(proc.pid)
    try:
        yield
    finally:
        with _live_lock:
            _live_groups.discard(proc.pid)


@dataclass(slots=True, kw_only=True)
class ProcessOutcome:
    exit_code: int | None
    timed_out: bool
    output: str
    lines_omitted: int
    total_bytes: int
    output_limited: bool = False


class OutputBuffer:
    """Keeps the first and the last lines of a byte stream in bounded memory."""

    def __init__(self, max_lines: int, line_bytes: int = 2000) -> None:
        self.head_lines = max(1, max_lines // 2)
        self.tail_lines = max(1, max_lines - self.head_lines)
        self.line_bytes = line_bytes
        self.head: list[tuple[bytes, int]] = []  # (kept bytes, bytes cut)
        self._partial = bytearray()
        self._partial_cut = 0
        self._tail = bytearray()
        self._tail_cap = self.tail_lines * (line_bytes + 1)
        self._tail_trimmed = False
        self._tail_newlines = 0
        self.total_bytes = 0

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        view = memoryview(data)
        while view and len(self.head) < self.head_lines:
            i = data.find(b"\n", len(data) - len(view))
            piece = view if i < 0 else view[: i - (len(data) - len(view))]
            room = self.line_bytes - len(self._partial)
            self._partial += piece[: max(room, 0)]
            self._partial_cut += max(len(piece) - max(room, 0), 0)
            if i < 0:
                return
            self.head.append((bytes(self._partial), self._partial_cut))
            self._partial.clear()
            self._partial_cut = 0
            view = view[len(piece) + 1 :]
        if view:
            self._tail_newlines += data.count(b"\n", len(data) - len(view))
            self._tail += view
            if len(self._tail) > 2 * self._tail_cap:
                del self._tail[: len(self._tail) - self._tail_cap]
                self._tail_trimmed = True

    def render(self) -> tuple[str, int]:
        """The kept text, secrets redacted, and how many lines were left out of it.

        Redaction sees the text as it was printed: consecutive kept lines together (a secret broken across
        two lines is found), and a fragment of a secret left at a cut (a line cut short, lines left out) is
        redacted too, so no cut leaves part of a secret showing."""
        out = _Redacting()
        for data, cut in self.head:
            out.line(data, cut)
        if len(self.head) < self.head_lines:
            if self._partial or self._partial_cut:
                out.line(bytes(self._partial), self._partial_cut)
            return out.text(), 0
        tail = bytes(self._tail)
        total = self._tail_newlines + (1 if tail and not tail.endswith(b"\n") else 0)
        pieces = tail.split(b"\n")
        if tail.endswith(b"\n"):
            pieces.pop()
        if self._tail_trimmed and pieces:
            pieces.pop(0)  # cut somewhere in its middle
        kept = pieces[-self.tail_lines :] if tail else []
        omitted = total - len(kept)
        if omitted > 0:
            out.gap(f"[... {omitted} lines omitted ...]")
        for piece in kept:
            out.line(piece[: self.line_bytes], max(len(piece) - self.line_bytes, 0))
        return out.text(), max(omitted, 0)


class _Redacting:
    """Assembles kept output lines into runs of uncut text, redacting each run as a whole."""

    def __init__(self) -> None:
        self.chunks: list[str] = []  # joined by newlines: redacted runs of lines, and gap markers
        self.run: list[str] = []
        self.starts_cut = False

    def line(self, data: bytes, cut: int) -> None:
        self.run.append(data.decode("utf-8", "replace"))
        if cut:
            self._close(cut_end=True, suffix=f" [... line cut: {cut} more bytes]")

    def gap(self, marker: str) -> None:
        self._close(cut_end=True)
        self.chunks.append(marker)
        self.starts_cut = True

    def text(self) -> str:
        self._close(cut_end=False)
        return "\n".join(self.chunks)

    def _close(self, *, cut_end: bool, suffix: str = "") -> None:
        if self.run:
            text = "\n".join(self.run)
            redacted = default_redactor().redact_cut(text, cut_start=self.starts_cut, cut_end=cut_end)
            self.chunks.append(redacted + suffix)
            self.run = []
        self.starts_cut = False


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    max_lines: int,
    max_bytes: int = 256 * 1024 * 1024,
) -> ProcessOutcome:
    """Run `argv` with stdin closed, stdout and stderr merged, killing its whole process group at `timeout`.

    Reading stops and the group is killed once `max_bytes` have been produced (an output bomb).
    """
    buffer = OutputBuffer(max_lines)
    timed_out = limited = False
    deadline = time.monotonic() + timeout
    with (
        process_group(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        ) as proc,
        _tracked(proc),
    ):
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        finished = False  # the main process exited, was timed out or was stopped for its output
        drain_until = deadline
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if not finished and (proc.poll() is not None or now >= deadline):
                    timed_out = proc.returncode is None
                    finished = True
                    kill_group(proc.pid)  # the whole tree; background jobs do not outlive the call
                    drain_until = now + EXIT_GRACE_SECONDS
                elif finished and now >= drain_until:
                    break  # something outside the group still holds the pipe open
                wait = (drain_until if finished else deadline) - now
                if not selector.select(timeout=max(0.0, min(wait, 0.05))):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buffer.feed(chunk)
                if buffer.total_bytes > max_bytes and not limited:
                    limited = True
                    kill_group(proc.pid)
        if not finished:  # end of output: let the main process finish within its deadline
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
            except subprocess.TimeoutExpired:
                timed_out = True
        kill_group(proc.pid)
        exit_code = proc.wait()
    output, omitted = buffer.render()
    return ProcessOutcome(
        exit_code=None if timed_out else exit_code,
        timed_out=timed_out,
        output=output,
        lines_omitted=omitted,
        total_bytes=buffer.total_bytes,
        output_limited=limited,
    )
