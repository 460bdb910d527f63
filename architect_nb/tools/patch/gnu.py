"""The fallback to the system's GNU `patch`, confined so that it can only ever change one copy of one file.

It runs on a copy of the text in a fresh temporary folder, never in the workspace: the target is named
explicitly, a dry run comes first, fuzz is off (a stale patch must fail, not land nearby), rejects go to a
file in the temporary folder and no backups are made. If `patch` creates or removes any other file there
(because the patch named more files), the result is refused. The caller writes the result back itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

__all__ = ["GnuPatchError", "gnu_patch", "gnu_patch_available"]

_TIMEOUT_S = 10.0
_TARGET = "target"


class GnuPatchError(Exception):
    """GNU patch is missing, refused the patch, or did something other than change the one file."""


def gnu_patch_available() -> bool:
    return shutil.which("patch") is not None


def gnu_patch(
    text: str,
    patch: str,
    form: Literal["unified", "context", "normal"] = "unified",
    timeout: float = _TIMEOUT_S,
) -> str:
    """Apply `patch` to `text` with GNU patch (UTF-8, no fuzz) and return the new text.

    The diff format is forced (`form`), so that patch never reads the input as an ed script, which it would
    hand to `ed`.
    """
    exe = shutil.which("patch")
    if exe is None:
        raise GnuPatchError("the system 'patch' command is not installed")
    with tempfile.TemporaryDirectory(prefix="architect-patch-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        target = work / _TARGET
        target.write_bytes(text.encode("utf-8", "surrogateescape"))
        patch_file = Path(tmp) / "input.patch"
        patch_file.write_bytes(patch.encode("utf-8", "surrogateescape"))
        base = [
            exe,
            "--force",  # never ask, never guess that a patch is reversed
            "--fuzz=0",
            "--no-backup-if-mismatch",
            "--reject-file",
            str(Path(tmp) / "rejects"),
            "--quoting-style=literal",
            f"--{form}",
            "--input",
            str(patch_file),
            _TARGET,  # the file is always named: patch never picks one from the headers
        ]
        _run([*base, "--dry-run"], work, timeout)
        _run(base, work, timeout)
        left = sorted(p.name for p in work.iterdir())
        if left != [_TARGET]:
            raise GnuPatchError(f"patch touched other files ({', '.join(left)}); its result is refused")
        try:
            return target.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise GnuPatchError("patch produced text that is not valid UTF-8") from None


def _run(cmd: list[str], cwd: Path, timeout: float) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GnuPatchError(f"patch did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise GnuPatchError(f"patch could not be run: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        said = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
        said = said.replace(f"patching file {_TARGET}\n", "").replace("checking file target\n", "")
        raise GnuPatchError(said[-600:] or f"patch exited with status {proc.returncode}")
