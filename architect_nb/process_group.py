"""A child process in a process group of its own, so a timeout, or the end of the call, stops it and
everything it started.

Hooks, quality gates and `run_command` all start shell commands that may leave background jobs behind
(`make &`, a server a test forgot). Killing the group, not only the process, takes those too. The group is
killed before the child is reaped: until then its pid, the group's id, cannot be given to another process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

__all__ = ["kill_group", "process_group", "wait_or_kill"]


def kill_group(pgid: int) -> None:
    """SIGKILL every process of the group; a group that is gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@contextlib.contextmanager
def process_group(args: Any, **popen: Any) -> Iterator[subprocess.Popen[bytes]]:
    """`Popen(args, **popen)` in a new session; on leaving, its group is killed and it is reaped."""
    proc: subprocess.Popen[bytes] = subprocess.Popen(args, start_new_session=True, **popen)
    try:
        yield proc
    finally:
        kill_group(proc.pid)  # whatever it left running goes with it
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()


def wait_or_kill(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    """The exit code, or None when `timeout` seconds passed first and the group was killed."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        proc.wait()
        return None
