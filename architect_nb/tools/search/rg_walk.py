"""ripgrep walking the workspace itself, with the Python walk's rules given as arguments: the fast path.

Walking a large tree in Python costs as much as searching it, and handing `rg` the walk's file list in
chunks costs more than letting it walk. So where `rg` is installed, it walks, told the rules of `walk`:
`.gitignore` files at any depth, whether or not the folder is a git repository (`--no-require-git`), the
root's `.git/info/exclude` (`--ignore-file`), and nothing else (no global, `.ignore` or parent rules
beyond the workspace); hidden files searched, symlinks never followed; the skipped folders and the search
scope (`scope`: sensitive files, state folders) as negative globs, so rg never opens those; the caller's
file pattern as a file type where rg reads it as we do. It answers in one pass: the files with matches and
their counts, and the number of files searched (`-c --stats`), or every file (`--files`). Listing every
file with its count (`--include-zero`) would cost rg more than the search.

What globs cannot say is checked on rg's answer: virtualenvs (a folder holding `pyvenv.cfg` or
`conda-meta`) and the file pattern. `walk` stays the reference: while a walk of the start is kept
(`walk_cache`), it decides which files count; where the rules cannot be given to rg exactly (a `.gitignore`
above the workspace and a subfolder searched, an unusual sensitive glob), `walk_args` says so with None and
the caller walks in Python.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from architect_nb.tools.search.programs import ProgramError
from architect_nb.tools.search.scan import NOTEBOOK_SUFFIX
from architect_nb.tools.search.scope import SearchScope
from architect_nb.tools.search.walk_cache import cached_files
from architect_nb.tools.tree.walk import SKIPPED_DIR_NAMES

__all__ = ["Listing", "json_safe", "rg_listing", "walk_args", "walk_order"]

_COUNT_LINE = re.compile(rb"([^\x00]*)\x00(\d+)\n")
#: The line of `--stats` that counts the files searched.
_SEARCHED = re.compile(rb"^(\d+) files? searched$", re.MULTILINE)
_VENV_MARKERS = ("pyvenv.cfg", "conda-meta")
_LONGEST_WAIT = 86_400.0


@dataclass(slots=True)
class Listing:
    """What rg's walk found that a search may see, in walk order: the files with matches and their matching
    lines (`-c`), or every file (`--files`, counts 0); how many files were searched; the notebooks among them
    when asked for; and whether the deadline cut the walk."""

    files: list[tuple[str, int]]
    searched: int
    notebooks: list[str] = field(default_factory=list)
    timed_out: bool = False


def walk_order(rel: str) -> str:
    """The sort key that gives `walk`'s order (depth first, names sorted) for workspace paths: the path with
    its separators made NUL, which sorts before any character a name can hold, so paths compare folder by
    folder."""
    return rel.replace("/", "\x00")


def json_safe(text: str) -> bool:
    """Whether `text` is written as itself in a notebook's JSON (so rg finds it in the raw file wherever a
    cell holds it): printable ASCII without quotes or backslashes, which JSON escapes."""
    return all(" " <= ch <= "~" and ch not in '"\\' for ch in text)


def walk_args(rg: str, root: Path, start: Path, scope: SearchScope | None) -> list[str] | None:
    """rg's arguments for walking `start` (a folder in `root`) as `walk` does, or None if rg cannot."""
    scope_globs = scope.rg_globs() if scope else []
    if scope_globs is None:
        return None
    args = [
        rg,
        "--no-config",
        "--no-messages",
        "--hidden",
        "--no-require-git",
        "--no-ignore-dot",
        "--no-ignore-global",
        "--no-ignore-exclude",
        "--null",
        "--block-buffered",  # a file per line of output: written in blocks, read in a few calls
    ]
    exclude = root / ".git" / "info" / "exclude"
    if exclude.is_file():
        args += ["--ignore-file", str(exclude)]
    if any((folder / ".gitignore").is_file() for folder in root.parents):
        if start != root:  # rg would read those too, or none between the root and `start`
            return None
        args.append("--no-ignore-parent")
    if start != root and _path_rules_above(root, start):
        return None  # rg 14.1 drops more than git does there (BurntSushi/ripgrep#2778): the Python walk goes
    for name in sorted(SKIPPED_DIR_NAMES):
        args += ["-g", f"!{name}/"]
    return args + scope_globs


def _path_rules_above(root: Path, start: Path) -> bool:
    """Whether a `.gitignore` between `root` and `start` has a rule that names `start`'s files by a pattern
    (`sub/*.txt` for `start` = sub): rg 14.1, walking `start`, strips the folder and applies what is left at
    every depth, dropping files git keeps (BurntSushi/ripgrep#2778)."""
    folder = start.parent
    while True:
        rel = start.relative_to(folder).as_posix() + "/"
        try:
            lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines = []
        for line in lines:
            rule = line.strip().lstrip("!").lstrip("/")
            rest = rule[len(rel) :].rstrip("/") if rule.startswith(rel) else ""
            if rest and "/" not in rest and any(ch in rest for ch in "*?["):
                return True
        if folder == root or root not in folder.parents:
            return False
        folder = folder.parent


def rg_listing(
    base: list[str],
    mode: list[str],
    root: Path,
    start: Path,
    deadline: float,
    *,
    select: Callable[[str], bool] | None,
    scope: SearchScope | None,
    notebooks: bool = False,
) -> Listing:
    """Run rg walking `start` with `base` (`walk_args`) and `mode`: `-c` and a pattern (only the files with
    matches are printed, and the count of files searched), or `--files`. Keep the files `select` accepts
    (all of them if None) that the walk's rules let a search see; with `notebooks`, also list the notebooks
    searched.

    When a walk of `start` is kept (`walk_cache`) and still valid, it says exactly which files a search may
    see. Otherwise rg's answer is checked on disk for virtualenvs, which globs cannot describe: a folder
    holding a marker is known from the files listed, or looked at for each file with matches; a virtualenv
    holding no match may then be in the count of files searched. Raises `ProgramError` if rg fails.
    """
    start_rel = "" if start == root else start.relative_to(root).as_posix()
    out, timed_out = _run([*base, *mode, "--", start_rel or "."], str(root), deadline)
    counting = "--files" not in mode
    if counting:
        entries = [(os.fsdecode(m[1]), int(m[2])) for m in _COUNT_LINE.finditer(out)]
        stats = _SEARCHED.search(out, out.rfind(b"\x00") + 1)
        searched = int(stats[1]) if stats is not None and not timed_out else len(entries)
    else:
        names = out.split(b"\x00")
        if timed_out and names:
            names.pop()  # maybe cut
        entries = [(os.fsdecode(name), 0) for name in names if name]
        searched = len(entries)
    if not start_rel:
        entries = [(rel[2:] if rel.startswith("./") else rel, count) for rel, count in entries]
    kept = cached_files(root, start)
    if kept is not None:
        allowed = {
            rel for _path, rel in kept if (select is None or select(rel)) and not (scope and scope.hides(rel))
        }
        files = [(rel, count) for rel, count in entries if rel in allowed]
        if not timed_out:
            searched = len(allowed)
        found = [rel for _path, rel in kept if rel in allowed and rel.endswith(NOTEBOOK_SUFFIX)]
        return Listing(sorted(files, key=_order), searched, found if notebooks else [], timed_out)
    venvs = _venvs_named(entries, start_rel)
    checked: dict[str, bool] = {}
    files = []
    root_text = str(root)
    for rel, count in entries:
        if (select is not None and not select(rel)) or (scope and scope.hides(rel)):
            searched -= 1
            continue
        folder = rel.rpartition("/")[0]
        if (venvs and _in_any(rel, venvs)) or _venv_folder(root_text, folder, len(start_rel), checked):
            searched -= 1
            continue
        files.append((rel, count))
    files.sort(key=_order)
    found = []
    if notebooks and not counting:
        found = [rel for rel, _count in files if rel.endswith(NOTEBOOK_SUFFIX)]
    elif notebooks:
        listed = rg_listing(
            base,
            ["--type-add", "notebook:*.ipynb", "-t", "notebook", "--files"],
            root,
            start,
            deadline,
            select=select,
            scope=scope,
        )
        found = [rel for rel, _count in listed.files]
        timed_out |= listed.timed_out
    return Listing(files, max(searched, len(files)), found, timed_out)


def _order(entry: tuple[str, int]) -> str:
    return entry[0].replace("/", "\x00")


def _venvs_named(entries: list[tuple[str, int]], start_rel: str) -> set[str]:
    """The folders below `start_rel` that rg's answer shows to be virtualenvs (they hold a marker)."""
    found: set[str] = set()
    for rel, _count in entries:
        if "pyvenv.cfg" not in rel and "conda-meta" not in rel:
            continue
        parts = rel.split("/")
        for depth, part in enumerate(parts):
            if part in _VENV_MARKERS:  # a file or a folder of that name marks its folder
                folder = "/".join(parts[:depth])
                if len(folder) > len(start_rel):
                    found.add(folder)
    return found


def _in_any(rel: str, folders: set[str]) -> bool:
    folder = rel
    while "/" in folder:
        folder = folder.rpartition("/")[0]
        if folder in folders:
            return True
    return False


def _venv_folder(root: str, folder: str, start_len: int, checked: dict[str, bool]) -> bool:
    """Whether `folder` or one of its folders below the start (`start_len` characters of a path) holds a
    virtualenv marker, looked at on disk and remembered per folder."""
    if len(folder) <= start_len:
        return False
    known = checked.get(folder)
    if known is None:
        base = os.path.join(root, folder)
        known = _venv_folder(root, folder.rpartition("/")[0], start_len, checked) or any(
            os.path.lexists(os.path.join(base, m)) for m in _VENV_MARKERS
        )
        checked[folder] = known
    return known


def _run(args: list[str], cwd: str, deadline: float) -> tuple[bytes, bool]:
    """rg's output (all of it, or what it wrote before the deadline) and whether the deadline cut it.

    One blocking read to the end, with a timer to kill rg at the deadline and its messages in a file: far
    less work here than polling two pipes while rg writes.
    """
    remaining = min(deadline - time.monotonic(), _LONGEST_WAIT)
    if remaining <= 0:
        return b"", True
    with tempfile.TemporaryFile() as messages:
        try:
            proc = subprocess.Popen(
                args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=messages
            )
        except OSError as exc:
            raise ProgramError(f"rg could not start: {exc}") from None
        killed = threading.Event()

        def stop() -> None:
            killed.set()
            proc.kill()

        timer = threading.Timer(remaining, stop)
        timer.start()
        try:
            assert proc.stdout is not None
            with proc.stdout:
                out = proc.stdout.read()
        finally:
            timer.cancel()
            if proc.poll() is None and not killed.is_set():
                proc.kill()  # the read failed part way
            proc.wait()
        if killed.is_set():
            return out, True
        messages.seek(0)
        err = messages.read(4096)
    if proc.returncode < 0 or (proc.returncode >= 2 and err.strip()):
        message = err.decode("utf-8", "replace").strip()[:300] or f"killed by signal {-proc.returncode}"
        raise ProgramError(f"rg failed: {message}")
    return out, False
