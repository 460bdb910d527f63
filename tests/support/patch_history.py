"""A patch case set made from real history: this repository's own commits (shared by tests and benchmarks).

Every commit up to `PINNED` that modifies a UTF-8 text file gives one real change, old file to new file. Each
change comes as several patches, every one with the exact bytes the patched file must have:

- `git`, `U1`, `U0`: `git diff` with 3, 1 and 0 context lines; `diff-u`: `diff -u`;
- `later`, `later-U1`: the same change applied to the file as a later commit left it (its edits elsewhere
  shift every line number after them); the expected bytes are git's three-way merge, which must agree both
  ways (later edits onto the changed file, and the change onto the later file). Zero-context diffs are not
  tried against a changed file: a hunk that only adds lines has nothing but its header to place it by there,
  so every tool puts some of them on the wrong side of a later edit;
- `offset`, `offset-U1`: hunk headers off by up to twenty lines, one error for the whole patch, as a model
  miscounts;
- `counts`: miscounted hunk headers (the body is right);
- `crlf`: the same files with CRLF line endings, diffed faithfully (the patch's lines carry the CRs);
- `bom`: the same files with a UTF-8 byte-order mark, diffed faithfully, for the changes whose first hunk
  touches line 1 (so the mark is in the patch).

History is immutable, so the set is the same on every machine that has the pinned commit (any clone of this
repository that is not shallow); `history_available()` says whether it has.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.support.patch_corpus import wreck_counts

#: The newest commit whose history is used. Pinned, so that the set does not grow with every commit.
PINNED = "90490b560417e9664c0f729cf4a4745dc760c8ad"
ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ("git", "diff-u", "U1", "U0", "later", "later-U1", "offset", "offset-U1", "counts", "crlf", "bom")
SEED = 23
_MAX_BYTES = 200_000
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? ", re.MULTILINE)
_FULL_HUNK = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class HistoryCase:
    name: str  # '<commit>:<path>/<variant>'
    variant: str
    path: str
    old: bytes
    new: bytes  # the exact bytes the patched file must have
    patch: str

    @property
    def unidiff_zero(self) -> bool:
        """A diff without context lines (git apply needs --unidiff-zero for these)."""
        return self.variant.endswith("U0")


@dataclass(frozen=True, slots=True)
class _Change:
    commit: str
    path: str
    old: str
    new: str
    later_base: str | None  # the next commit that changes the file: (parent, itself) blob texts
    later: str | None


def _git(*args: str, data: bytes | None = None) -> bytes:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    return subprocess.run(
        ["git", *args], cwd=ROOT, input=data, capture_output=True, check=True, env=env
    ).stdout


def history_available() -> bool:
    try:
        _git("cat-file", "-e", f"{PINNED}^{{commit}}")
        return _git("rev-parse", "--is-shallow-repository").strip() == b"false"
    except (subprocess.CalledProcessError, OSError):
        return False


def _changes(limit: int | None) -> list[_Change]:
    """Every (commit, path) that modifies a text file, oldest first, with the next change of that path."""
    log = _git("log", "--reverse", "--no-merges", "--no-renames", "--format=@%H", "--name-status", PINNED)
    order: list[tuple[str, str]] = []
    commit = ""
    for line in log.decode("utf-8", "replace").splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line.startswith("M\t"):
            order.append((commit, line[2:]))
    wanted = [f"{c}^:{p}" for c, p in order] + [f"{c}:{p}" for c, p in order]
    blobs = _cat_files(wanted)
    changes: list[_Change] = []
    for i, (commit, path) in enumerate(order):
        old, new = blobs.get(f"{commit}^:{path}"), blobs.get(f"{commit}:{path}")
        if old is None or new is None or old == new:
            continue
        nxt = next(((c, p) for c, p in order[i + 1 :] if p == path), None)
        later_base = later = None
        if nxt is not None:
            later_base, later = blobs.get(f"{nxt[0]}^:{path}"), blobs.get(f"{nxt[0]}:{path}")
        changes.append(_Change(commit[:10], path, old, new, later_base, later))
        if limit is not None and len(changes) >= limit:
            break
    return changes


def _cat_files(specs: list[str]) -> dict[str, str]:
    """The texts of `specs` ('rev:path') that are UTF-8 text without CRs or a BOM, in one git process."""
    out = _git("cat-file", "--batch", data="".join(s + "\n" for s in specs).encode())
    texts: dict[str, str] = {}
    pos = 0
    for spec in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        data = out[pos : pos + size]
        pos += size + 1
        if size > _MAX_BYTES or b"\x00" in data or b"\r" in data or data.startswith(b"\xef\xbb\xbf"):
            continue
        try:
            texts[spec] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return texts


def _diffs(pairs: list[tuple[bytes, bytes]], tool: list[str]) -> list[str]:
    """One diff per (old, new) pair, made by `tool` over two folders in one process; names a/f, b/f."""
    with tempfile.TemporaryDirectory(prefix="patch-history-") as tmp:
        for side in ("a", "b"):
            Path(tmp, side).mkdir()
        for i, (old, new) in enumerate(pairs):
            Path(tmp, "a", f"f{i:05d}").write_bytes(old)
            Path(tmp, "b", f"f{i:05d}").write_bytes(new)
        env = {"PATH": os.environ["PATH"], "HOME": tmp, "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"}
        out = subprocess.run([*tool, "a", "b"], cwd=tmp, capture_output=True, check=False, env=env).stdout
    marker = "diff --git " if tool[0] == "git" else "diff -ru"
    sections = [s for s in re.split(rf"(?m)^(?={re.escape(marker)})", out.decode("utf-8")) if s]
    by_index: dict[int, str] = {}
    for section in sections:
        m = re.search(r"\bf(\d{5})\b", section.split("\n", 1)[0])
        if m:
            by_index[int(m.group(1))] = section
    return [by_index.get(i, "") for i in range(len(pairs))]


def _git_diff(pairs: list[tuple[bytes, bytes]], context: int) -> list[str]:
    return _diffs(pairs, ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", f"-U{context}"])


def _merge(current: str, base: str, other: str) -> str | None:
    """git's three-way merge of `base`→`other` onto `current`; None on a conflict."""
    with tempfile.TemporaryDirectory(prefix="patch-merge-") as tmp:
        names = []
        for name, text in (("current", current), ("base", base), ("other", other)):
            Path(tmp, name).write_text(text, encoding="utf-8")
            names.append(str(Path(tmp, name)))
        proc = subprocess.run(["git", "merge-file", "-p", *names], capture_output=True, check=False)
    return proc.stdout.decode("utf-8") if proc.returncode == 0 else None


def _later(change: _Change) -> tuple[str, str] | None:
    """(the old file with the next commit's edits, the new file with them), when the merges agree."""
    if change.later_base is None or change.later is None:
        return None
    old_later = _merge(change.old, change.later_base, change.later)
    new_later = _merge(change.new, change.later_base, change.later)
    if old_later is None or new_later is None or old_later == change.old:
        return None
    if _merge(old_later, change.old, change.new) != new_later:
        return None
    return old_later, new_later


def _first_hunk_at_line_one(patch: str) -> bool:
    m = _HUNK.search(patch)
    return m is not None and int(m.group(1)) <= 1


def shift_headers(patch: str, rng: random.Random, most: int = 20) -> str:
    """Hunk headers off as a model miscounts: one error of 1 to `most` lines for the whole patch, each hunk
    give or take 2 (never beyond `most`)."""
    base = rng.choice([-1, 1]) * rng.randint(1, most)

    def shifted(m: re.Match[str]) -> str:
        d = max(-most, min(most, base + rng.randint(-2, 2))) or base
        a, c = max(1, int(m.group(1)) + d), max(1, int(m.group(3)) + d)
        return f"@@ -{a}{m.group(2)} +{c}{m.group(4)} @@"

    return _FULL_HUNK.sub(shifted, patch)


def build_history(limit: int | None = None, seed: int = SEED) -> list[HistoryCase]:
    """Every variant of every real change (of the first `limit` changes, oldest first)."""
    rng = random.Random(seed)
    changes = _changes(limit)
    plain = [(c.old.encode(), c.new.encode()) for c in changes]
    crlf = [(o.replace(b"\n", b"\r\n"), n.replace(b"\n", b"\r\n")) for o, n in plain]
    bom = [(b"\xef\xbb\xbf" + o, b"\xef\xbb\xbf" + n) for o, n in plain]
    diffs = {
        "git": _git_diff(plain, 3),
        "U1": _git_diff(plain, 1),
        "U0": _git_diff(plain, 0),
        "diff-u": _diffs(plain, ["diff", "-ruN"]),
        "crlf": _git_diff(crlf, 3),
        "bom": _git_diff(bom, 3),
    }
    with ThreadPoolExecutor(max_workers=4) as pool:  # git merge-file processes, three per change
        laters = list(pool.map(_later, changes))
    cases: list[HistoryCase] = []
    for i, change in enumerate(changes):

        def case(variant: str, old: bytes, new: bytes, patch: str, change: _Change = change) -> None:
            if patch:
                name = f"{change.commit}:{change.path}/{variant}"
                cases.append(HistoryCase(name, variant, change.path, old, new, patch))

        old, new = plain[i]
        for variant in ("git", "diff-u", "U1", "U0"):
            case(variant, old, new, diffs[variant][i])
        if laters[i] is not None:
            old_later, new_later = laters[i]
            case("later", old_later.encode(), new_later.encode(), diffs["git"][i])
            case("later-U1", old_later.encode(), new_later.encode(), diffs["U1"][i])
        case("offset", old, new, shift_headers(diffs["git"][i], rng))
        case("offset-U1", old, new, shift_headers(diffs["U1"][i], rng))
        case("counts", old, new, wreck_counts(diffs["git"][i], rng))
        case("crlf", *crlf[i], diffs["crlf"][i])
        if _first_hunk_at_line_one(diffs["bom"][i]):
            case("bom", *bom[i], diffs["bom"][i])
    return cases
