"""Literal search over a list of files with `rg`, `grep` or pure Python, giving the same answer with each.

The walk (`search.walk`) decides which files are searched; every backend gets that list, so the skip rules are
the project's, not the program's. All three compare bytes as `rg` reads a file: the pattern's UTF-8 against
each line (lines end at `\\n`) of the file's raw bytes, except that a UTF-8 BOM is dropped and a file with
a UTF-16 BOM is read as its text in UTF-8 (`rg_view`). `grep` cannot decode UTF-16, so files with a BOM are
searched in Python when it is the backend. Case-insensitive search expands each character into its case
variants (`é` → `é|É`) and hands the same alternation to each backend, so no locale or Unicode table decides
what matches. Binary files (a NUL in the first 8 KB, unless after a UTF-16 BOM), symlinks and hard-linked
files are dropped after the count, the same way for every backend.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import sys
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, Protocol

from architect_nb.tools.search.programs import chunks, find_grep, find_rg, run_each
from architect_nb.tools.search.scan import BINARY_SNIFF_BYTES, NOFOLLOW_FLAGS, looks_binary, read_regular

__all__ = [
    "BACKENDS",
    "BackendName",
    "GrepBackend",
    "Needle",
    "PythonBackend",
    "available_backend",
    "make_backend",
    "rg_view",
    "searchable",
    "searchable_among",
]

BackendName = Literal["rg", "grep", "python"]
BACKENDS: tuple[BackendName, ...] = ("rg", "grep", "python")
#: (file, line number, line bytes without its end)
RawLine = tuple[str, int, bytes]
_ERE_SPECIAL = frozenset(b".[()*+?{|^$\\")
_COUNT_LINE = re.compile(rb"([^\x00]*)\x00(\d+)\n")
_MATCH_LINE = re.compile(rb"([^\x00]*)\x00(\d+):([^\n]*)\n")
_UTF16 = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
#: `searchable_among`'s verdicts: path -> ((inode, size, change time, modification time), searchable).
_verdicts: dict[str, tuple[tuple[int, int, int, int], bool]] = {}
_MAX_VERDICTS = 200_000
_RACY_NS = 2_000_000_000


def case_variants(ch: str) -> tuple[str, ...]:
    """`ch` and its one-character lower, upper and title forms, closed over one more step."""
    found = {ch}
    for _ in range(2):
        for c in list(found):
            found.update(v for v in (c.lower(), c.upper(), c.title(), c.casefold()) if len(v) == 1)
    return tuple(sorted(found))


@dataclass(frozen=True)
class Needle:
    """A literal to find, in the forms each backend takes."""

    text: str
    ignore_case: bool

    @cached_property
    def raw(self) -> bytes:
        return self.text.encode("utf-8")

    @property
    def ascii(self) -> bool:
        """ASCII text ignoring case: each program's own ASCII-only case folding gives the same answer."""
        return self.text.isascii()

    @cached_property
    def python(self) -> re.Pattern[bytes]:
        if self.ascii:
            return re.compile(re.escape(self.raw), re.IGNORECASE)
        parts = []
        for ch in self.text:
            options = [re.escape(v.encode()) for v in self._variants(ch)]
            parts.append(options[0] if len(options) == 1 else b"(?:" + b"|".join(options) + b")")
        return re.compile(b"".join(parts))

    @cached_property
    def rg_regex(self) -> str:
        if self.ascii:  # (?-u): ASCII case folding only, so `k` does not also match the Kelvin sign
            return "(?i-u)" + "".join(ch if ch.isalnum() else f"\\x{{{ord(ch):X}}}" for ch in self.text)
        parts = []
        for ch in self.text:
            options = [f"\\x{{{ord(v):X}}}" for v in self._variants(ch)]
            parts.append(options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")")
        return "".join(parts)

    @cached_property
    def ere(self) -> bytes:
        parts = []
        for ch in self.text:
            options = [
                b"".join(b"\\" + bytes([b]) if b in _ERE_SPECIAL else bytes([b]) for b in v.encode())
                for v in self._variants(ch)
            ]
            parts.append(options[0] if len(options) == 1 else b"(" + b"|".join(options) + b")")
        return b"".join(parts)

    def rg_pattern_args(self) -> list[str]:
        """The pattern as `rg` takes it."""
        return ["-e", self.rg_regex] if self.ignore_case else ["-F", "-e", self.text]

    def _variants(self, ch: str) -> tuple[str, ...]:
        return case_variants(ch) if self.ignore_case else (ch,)

    def find(self, data: bytes, start: int) -> int:
        """Offset of the next occurrence in `data` from `start`, or -1."""
        if not self.ignore_case:
            return data.find(self.raw, start)
        m = self.python.search(data, start)
        return -1 if m is None else m.start()


class GrepBackend(Protocol):
    name: BackendName

    def counts(
        self, root: str, rels: list[str], needle: Needle, deadline: float
    ) -> tuple[dict[str, int], int]:
        """Matching lines per file (files without any may be left out) and how many files were searched."""
        ...

    def lines(
        self, root: str, rels: list[str], needle: Needle, deadline: float, limit: int | None = None
    ) -> list[RawLine]:
        """Every matching line of `rels`, or at least the first `limit` of each file."""
        ...


class _ProgramBackend:
    name: BackendName

    def __init__(self, name: BackendName, program: str) -> None:
        self.name = name
        self.program = program
        self.env = {**os.environ, "LC_ALL": "C"} if name == "grep" else None

    def _command(self, mode: list[str], needle: Needle) -> list[str]:
        if self.name == "rg":
            # Explicit paths bypass rg's ignore files; -a makes it compare raw bytes, like grep -a, after its
            # default BOM sniffing (see `rg_view`).
            base = [self.program, "--no-config", "--no-messages", "-a", "-s", "--null", *mode]
            pattern = needle.rg_pattern_args()
        else:
            base = [self.program, "-a", "-s", "--null", *mode]
            if not needle.ignore_case:
                pattern = ["-F", "-e", needle.text]
            elif needle.ascii:  # LC_ALL=C: -i folds ASCII letters only
                pattern = ["-F", "-i", "-e", needle.text]
            else:
                pattern = ["-E", "-e", os.fsdecode(needle.ere)]
        return [*base, *pattern, "--"]

    def counts(
        self, root: str, rels: list[str], needle: Needle, deadline: float
    ) -> tuple[dict[str, int], int]:
        rels, with_bom = self._split(root, rels, deadline)
        found: dict[str, int] = {}
        searched = 0
        batches = list(chunks(rels))
        command = self._command(["-c", "-H"], needle)
        runs = run_each([[*command, *batch] for batch in batches], root, deadline, self.env)
        for batch, (out, timed_out) in zip(batches, runs, strict=True):
            if timed_out:
                return found, searched
            searched += len(batch)
            for m in _COUNT_LINE.finditer(out):
                count = int(m.group(2))
                if count:
                    found[os.fsdecode(m.group(1))] = count
        if with_bom:
            in_python, done = PythonBackend().counts(root, with_bom, needle, deadline)
            found.update(in_python)
            searched += done
        return found, searched

    def lines(
        self, root: str, rels: list[str], needle: Needle, deadline: float, limit: int | None = None
    ) -> list[RawLine]:
        rels, with_bom = self._split(root, rels, deadline)
        found: list[RawLine] = []
        # rg stops reading a file at the lines it is asked for: many hits cost no more than the ones shown.
        most = ["-m", str(limit)] if limit is not None and self.name == "rg" else []
        command = self._command(["-n", "-H", *most], needle)
        for out, _ in run_each([[*command, *batch] for batch in chunks(rels)], root, deadline, self.env):
            found.extend((os.fsdecode(m[1]), int(m[2]), m[3]) for m in _MATCH_LINE.finditer(out))
        return found + PythonBackend().lines(root, with_bom, needle, deadline)

    def _split(self, root: str, rels: list[str], deadline: float) -> tuple[list[str], list[str]]:
        """(files for the program, files with a BOM, which `grep` cannot read as `rg` does)."""
        if self.name == "rg":
            return rels, []
        plain: list[str] = []
        with_bom: list[str] = []
        for i, rel in enumerate(rels):
            if i % 256 == 0 and time.monotonic() > deadline:
                return plain + rels[i:], with_bom  # out of time: the program run that follows stops at once
            (with_bom if _has_bom(os.path.join(root, rel)) else plain).append(rel)
        return plain, with_bom


class PythonBackend:
    """The fallback: reads each file and finds the needle with `bytes.find` (a bytes regex ignoring case)."""

    name: BackendName = "python"

    def counts(
        self, root: str, rels: list[str], needle: Needle, deadline: float
    ) -> tuple[dict[str, int], int]:
        found: dict[str, int] = {}
        for searched, rel in enumerate(rels):
            if time.monotonic() > deadline:
                return found, searched
            data = _read_text(os.path.join(root, rel))
            count = sum(1 for _ in _matching_lines(data, needle)) if data else 0
            if count:
                found[rel] = count
        return found, len(rels)

    def lines(
        self, root: str, rels: list[str], needle: Needle, deadline: float, limit: int | None = None
    ) -> list[RawLine]:
        found: list[RawLine] = []
        for rel in rels:
            data = _read_text(os.path.join(root, rel))
            if data:
                found.extend((rel, n, data[a:b]) for n, a, b in _matching_lines(data, needle, limit))
        return found


def _read_text(path: str) -> bytes | None:
    data = read_regular(path, sys.maxsize, skip_binary=True)
    return rg_view(data) if isinstance(data, bytes) else None


def rg_view(data: bytes) -> bytes:
    """The bytes `rg` searches in a file holding `data`: the same, but for a BOM.

    A UTF-8 BOM is dropped. UTF-16 with a BOM is decoded (undecodable units become U+FFFD) and encoded as
    UTF-8, also dropping a second BOM right after the first, as `rg` does.
    """
    if data.startswith(codecs.BOM_UTF8):
        return data[3:]
    for bom, codec in _UTF16:
        if data.startswith(bom):
            return data[2:].decode(codec, "replace").removeprefix("\ufeff").encode("utf-8")
    return data


def _has_bom(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW_FLAGS)
    except OSError:
        return False
    try:
        return os.read(fd, 3).startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    except OSError:
        return False
    finally:
        os.close(fd)


def _matching_lines(data: bytes, needle: Needle, limit: int | None = None) -> list[tuple[int, int, int]]:
    """(line number, start, end) of each line holding the needle, or of the first `limit`."""
    found: list[tuple[int, int, int]] = []
    pos = counted = 0
    line = 1
    while (limit is None or len(found) < limit) and (hit := needle.find(data, pos)) >= 0:
        line += data.count(b"\n", counted, hit)
        start = data.rfind(b"\n", 0, hit) + 1
        end = data.find(b"\n", hit)
        found.append((line, start, len(data) if end < 0 else end))
        if end < 0:
            break
        counted, pos = end, end + 1
    return found


def searchable(path: str) -> bool:
    """A regular file with one name whose first 8 KB hold no NUL: what every backend's hits are kept for."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW_FLAGS)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return False
        return not looks_binary(os.read(fd, BINARY_SNIFF_BYTES))
    except OSError:
        return False
    finally:
        os.close(fd)


def searchable_among(paths: list[str]) -> set[str]:
    """The `paths` that are `searchable`, with one `stat` each for files checked before and unchanged since.

    A file's verdict is kept with its inode, size, link count and change time (which any write updates, and
    which cannot be set back), unless it changed within `_RACY_NS` of the check, as `walk_cache` does.
    """
    kept: set[str] = set()
    racy = time.time_ns() - _RACY_NS
    if len(_verdicts) > _MAX_VERDICTS:
        _verdicts.clear()
    for path in paths:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            continue
        stamp = (st.st_ino, st.st_size, st.st_ctime_ns, st.st_mtime_ns)
        verdict = _verdicts.get(path)
        if verdict is None or verdict[0] != stamp:
            verdict = (stamp, searchable(path))
            if st.st_ctime_ns < racy and st.st_mtime_ns < racy:
                _verdicts[path] = verdict
        if verdict[1]:
            kept.add(path)
    return kept


def make_backend(name: BackendName) -> GrepBackend | None:
    """The named backend, or None if its program is not installed."""
    if name == "python":
        return PythonBackend()
    program = find_rg() if name == "rg" else find_grep()
    return _ProgramBackend(name, program) if program else None


def available_backend(preferred: BackendName | None = None) -> GrepBackend:
    """`preferred` if given and installed; otherwise the first of rg, grep, python that is."""
    for name in (preferred,) if preferred else BACKENDS:
        backend = make_backend(name)
        if backend is not None:
            return backend
    return PythonBackend()
