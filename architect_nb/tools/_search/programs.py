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
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["chunks", "find_grep", "find_rg", "run_program"]

# Bytes of file arguments per call: far below Linux's ARG_MAX, and within Windows' 32K command line.
_ARGS_BUDGET = 24_000 if os.name == "nt" else 200_000


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


def run_program(
    args: list[str], cwd: str, deadline: float, env: dict[str, str] | None = None
) -> tuple[bytes, bool]:
    """Run `args` in `cwd` until `deadline` (a `time.monotonic` value). Returns (stdout, timed_out)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return b"", True
    with subprocess.Popen(
        args,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    ) as proc:
        try:
            out, _ = proc.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return b"", True
    return out, False
