"""The workspace sandbox: the one gate every user-supplied path passes before any I/O.

`validate_path` resolves a path against the workspace root and refuses anything that would reach outside it:
`..`, absolute paths elsewhere, `~`, symlinks (including dangling ones) whose target lies outside,
hard links to
files that may live outside, NUL bytes and characters that disguise a path on screen.

Read-only data folders (`workspace.read_roots`) are the one exception: given `read_roots`, a path that
resolves into one of them (absolutely, or through a workspace symlink) passes, for reading only; with
`write`, it is refused with a message saying to write inside the workspace instead.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "MAX_PATH_LENGTH",
    "PathTraversalError",
    "is_inside",
    "read_root_of",
    "validate_path",
    "visible",
]

MAX_PATH_LENGTH = 4096

# Characters that make a path read differently from what it is: bidi overrides and isolates, zero-width
# characters and the BOM. Control characters (category Cc) are refused separately.
_DISGUISING = frozenset(
    "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
)


class PathTraversalError(ValueError):
    """A path is unusable or reaches outside the workspace. The message says which and why."""


def visible(text: str) -> str:
    """Return `text` with control, bidi and zero-width characters shown as escapes, for error messages."""
    if text.isascii() and text.isprintable():  # the common case, and a search may list thousands of paths
        return text
    out = []
    for ch in text:
        if ch in _DISGUISING or unicodedata.category(ch) in ("Cc", "Cf"):
            out.append(f"\\u{ord(ch):04x}" if ord(ch) > 0xFF else f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def is_inside(path: Path, root: Path) -> bool:
    """True if the already-resolved `path` is `root` or lies under it."""
    return path == root or path.is_relative_to(root)


def read_root_of(path: Path, read_roots: Sequence[Path]) -> Path | None:
    """The read root (resolved) that the already-resolved `path` lies in, or None."""
    for root in read_roots:
        real = Path(os.path.realpath(root))
        if is_inside(path, real):
            return real
    return None


def _check_text(path: str) -> None:
    if not isinstance(path, str):
        raise PathTraversalError(f"Path must be a string, not {type(path).__name__}.")
    if not path.strip():
        raise PathTraversalError(
            "Path is empty; give a path relative to the workspace root, such as 'src/app.py'."
        )
    if len(path) > MAX_PATH_LENGTH:
        raise PathTraversalError(f"Path is {len(path)} characters long; the limit is {MAX_PATH_LENGTH}.")
    if "\x00" in path:
        raise PathTraversalError(f"Path '{visible(path)}' contains a NUL byte.")
    for ch in path:
        if ch in _DISGUISING or unicodedata.category(ch) in ("Cc", "Cf", "Cs"):
            raise PathTraversalError(
                f"Path '{visible(path)}' contains the invisible or control character U+{ord(ch):04X}; "
                "use plain characters."
            )
    if path.startswith("~"):
        raise PathTraversalError(
            f"Path '{visible(path)}' starts with '~'; '~' is not expanded. "
            "Paths are relative to the workspace root."
        )


def validate_path(
    path: str, workspace_root: Path, *, read_roots: Sequence[Path] = (), write: bool = False
) -> Path:
    """Resolve `path` inside `workspace_root` and return the absolute, symlink-free result.

    Args:
        path: A path relative to the workspace root, or an absolute path inside it.
        workspace_root: The sandbox root.
        read_roots: Read-only data folders (`workspace.read_roots`) the path may also resolve into.
        write: The caller changes the path: one in a read root is refused.

    Raises:
        PathTraversalError: If the path is malformed or resolves (through `..`, an absolute path or a symlink)
            outside the workspace and the read roots, into a read root with `write`, or names a hard-linked
            file.
    """
    _check_text(path)
    root = Path(os.path.realpath(workspace_root))
    try:
        # realpath follows every symlink, dangling ones included, so a link whose target does not exist yet
        # is still judged by where a write through it would land.
        resolved = Path(os.path.realpath(root / path))
    except (OSError, ValueError) as exc:  # symlink loops, names too long for the OS
        raise PathTraversalError(f"Path '{visible(path)}' cannot be resolved: {exc}.") from exc
    if not is_inside(resolved, root):
        _check_read_root(path, resolved, root, read_roots, write=write)
    try:
        st = resolved.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return resolved  # does not exist yet; the tool says what that means for it
    except OSError as exc:
        raise PathTraversalError(f"Path '{visible(path)}' cannot be inspected: {exc.strerror}.") from exc
    # A hard link is indistinguishable from its twin, which may live outside the workspace.
    if not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1:
        raise PathTraversalError(
            f"Path '{visible(path)}' is a hard link (it has {st.st_nlink} names); its other names may lie "
            "outside the workspace, so it is refused."
        )
    return resolved


def _check_read_root(
    path: str, resolved: Path, root: Path, read_roots: Sequence[Path], *, write: bool
) -> None:
    """Let a path outside the workspace pass only if it lies in a read root and is not to be written."""
    folder = read_root_of(resolved, read_roots)
    if folder is None:
        also = " or in a read-only data folder (workspace.read_roots)" if read_roots else ""
        raise PathTraversalError(
            f"Path '{visible(path)}' escapes the workspace ({root}); only files inside it{also} can be used."
        )
    if write:
        raise PathTraversalError(
            f"Path '{visible(path)}' is in a read-only data folder ({folder}, workspace.read_roots); "
            "write inside the workspace instead."
        )
