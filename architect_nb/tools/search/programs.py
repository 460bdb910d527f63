"""Finding `rg` and `grep`, and running them on a list of files within a time bound.

`rg` comes from the `ripgrep` wheel, which installs it next to the interpreter (`.venv/bin/rg`). That folder
is not always on PATH (a kernel started from an IDE, a test run), so it is looked for there first.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["ProgramError", "chunks", "find_grep", "find_rg", "run_each", "run_program"]

# Bytes of file arguments per call: far below Linux's ARG_MAX, and within Windows' 32K command line.
_ARGS_BUDGET = 24_000 if os.name == "nt" else 200_000
_LONGEST_WAIT = 86_400.0  # what poll() and thread waits can take
#: Program runs at once over the batches of one search: a run's last files keep one thread busy while the
#: others idle, and the next run's start-up costs a few milliseconds, so two runs overlapping keep both cores
#: of a small machine working (measured: 24,000 files, six batches, 1.35 s one after the other, 1.05 s two
#: at once; rg walking the same tree itself, 0.93 s).
_AT_ONCE = 2


class ProgramError(RuntimeError):
    """`rg` or `grep` could not run or rejected its arguments; callers fall back to pure Python."""


@functools.cache
def find_rg() -> str | None:
    """The `rg` beside this interpreter (the ripgrep wheel's), else the one on PATH, else None."""
    name = "rg.exe" if os.name == "nt" else "rg"
    folders = [Path(sys.executable).parent] if sys.executable else []
    scripts = sysconfig.get_path("scripts")
    if scripts:
        folders.append(Path(scripts))
    for folder in folders:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


@functools.cache
def find_grep() -> str | None:
    """A `grep` that understands `--null` (GNU or BSD), or None."""
    path = shutil.which("grep")
    if path is None:
        return None
    try:
        probe = subprocess.run(
            [path, "-c", "-a", "-F", "--null", "-e", "x", "-"],
            input=b"x\n",
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return path if probe.stdout.strip() == b"1" else None


def chunks(rels: Sequence[str]) -> Iterator[list[str]]:
    """Split file arguments into command lines that the OS accepts."""
    batch: list[str] = []
    size = 0
    for rel in rels:
        cost = len(rel) + 8
        if batch and size + cost > _ARGS_BUDGET:
            yield batch
            batch, size = [], 0
        batch.append(rel)
        size += cost
    if batch:
        yield batch


def run_each(
    commands: Sequence[list[str]], cwd: str, deadline: float, env: dict[str, str] | None = None
) -> Generator[tuple[bytes, bool], None, None]:
    """`run_program` for each command, `_AT_ONCE` at a time; the results in the commands' order. A
    `ProgramError` is raised when its command's turn comes; commands not started when the caller stops are
    never run."""
    if len(commands) <= 1:
        for args in commands:
            yield run_program(args, cwd, deadline, env)
        return
    pool = ThreadPoolExecutor(max_workers=_AT_ONCE, thread_name_prefix="architect-search")
    try:
        futures = [pool.submit(run_program, args, cwd, deadline, env) for args in commands]
        for future in futures:
            yield future.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def run_program(
    args: list[str], cwd: str, deadline: float, env: dict[str, str] | None = None
) -> tuple[bytes, bool]:
    """Run `args` in `cwd` until `deadline` (a `time.monotonic` value). Returns (stdout, timed_out).

    Raises `ProgramError` if the program cannot start, dies of a signal, or fails with a message (a pattern
    it rejects); unreadable files alone are not an error, since both programs are told to keep quiet on them.
    """
    remaining = min(deadline - time.monotonic(), _LONGEST_WAIT)
    if remaining <= 0:
        return b"", True
    try:
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    except OSError as exc:
        raise ProgramError(f"{os.path.basename(args[0])} could not start: {exc}") from None
    with proc:
        try:
            out, err = proc.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return b"", True
    if proc.returncode < 0 or (proc.returncode >= 2 and err.strip()):
        message = err.decode("utf-8", "replace").strip()[:300] or f"killed by signal {-proc.returncode}"
        raise ProgramError(f"{os.path.basename(args[0])} failed: {message}")
    return out, False
