"""A patch corpus built from the Python standard library with a fixed seed (shared by tests and benchmarks).

Each base case takes a real stdlib source, edits it in one to four places (sometimes adding or removing
`-- ` lines, blank lines or the final newline), and diffs it with both `diff -u` and `git diff --no-index`.
Every diff then comes in damaged copies, one per kind of damage models and tools produce, each with the exact
bytes the patched file must have, plus stale cases (the file changed under the patch) that must fail.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SEED = 20_261_130
DAMAGES = ("clean", "offset", "counts", "blank", "crlf", "crlf-faithful", "headers", "all")

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    damage: str  # one of DAMAGES, or "stale" for a case that must fail
    old: bytes
    new: bytes  # the exact expected result; for a stale case, the untouched old bytes
    patch: str
    #: Line numbers are off and some hunk's lines occur more than once in the file, so nothing in the
    #: patch says which place is meant: refusing (file untouched) is as right as the exact result.
    may_refuse: bool = False

    @property
    def must_fail(self) -> bool:
        return self.damage == "stale"


def stdlib_sources(count: int, rng: random.Random) -> list[tuple[str, str]]:
    """`count` stdlib modules of 1-60 KB that are UTF-8 without CRs, chosen by `rng`."""
    root = Path(sysconfig.get_paths()["stdlib"])
    candidates = sorted(
        p
        for p in root.rglob("*.py")
        if "site-packages" not in p.parts and "lib2to3" not in p.parts and 1_000 <= p.stat().st_size <= 60_000
    )
    rng.shuffle(candidates)
    picked = []
    for path in candidates:
        try:
            text = path.read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if "\r" in text or text.startswith("\ufeff"):
            continue
        picked.append((path.relative_to(root).as_posix(), text))
        if len(picked) == count:
            break
    return picked


_SQL = ["-- drop table users;", "-- ", "--- not a header", "-- select 1", "--"]
_ADDED = ["++ not a header either", "+++ b/still not a header", "", "    pass", "# new comment"]


def edit_text(text: str, rng: random.Random, with_sql: bool) -> tuple[str, str]:
    """(old, new): `text` (with `-- ` lines planted when `with_sql`) and a copy edited in 1-4 places."""
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    k = rng.randint(1, 4)
    spots = sorted(rng.sample(range(len(lines)), min(k, len(lines))), reverse=True)
    if rng.random() < 0.15:
        spots[0] = len(lines) - 1  # an edit at the very end of the file
    old = list(lines)
    new = list(lines)
    for spot in spots:  # bottom up, so earlier spots keep their indexes
        if with_sql and rng.random() < 0.7:
            planted = rng.sample(_SQL, rng.randint(1, 3))
            old[spot:spot] = planted
            new[spot:spot] = planted
        op = rng.choice(("modify", "insert", "delete", "replace"))
        width = rng.randint(1, 3)
        if op == "modify":
            new[spot : spot + width] = [
                line + "  # edited" if line else "# was blank" for line in new[spot : spot + width]
            ]
        elif op == "insert":
            new[spot:spot] = [rng.choice([*_ADDED, f"x_{spot} = {rng.randint(0, 99)}"]) for _ in range(width)]
        elif op == "delete":
            del new[spot : spot + width]
        else:
            new[spot : spot + width] = [f"value_{spot}_{i} = None" for i in range(rng.randint(1, 3))]
    old_text = "\n".join(old) + "\n"
    new_text = "\n".join(new) + "\n" if new else ""
    roll = rng.random()
    if roll < 0.1:
        new_text = new_text[:-1]
    elif roll < 0.17:
        old_text = old_text[:-1]
    elif roll < 0.22:
        old_text, new_text = old_text[:-1], new_text.rstrip("\n")
    if old_text == new_text:
        new_text += "# changed\n"
    return old_text, new_text


def _run_diffs(pairs: list[tuple[str, str]], crlf: bool) -> tuple[list[str], list[str]]:
    """`diff -u` and `git diff --no-index` of every (old, new), in one process each."""
    with tempfile.TemporaryDirectory(prefix="patch-corpus-") as tmp:
        a, b = Path(tmp, "a"), Path(tmp, "b")
        a.mkdir()
        b.mkdir()
        for i, (old, new) in enumerate(pairs):
            eol = "\r\n" if crlf else "\n"
            (a / f"f{i:04d}.py").write_bytes(old.replace("\n", eol).encode())
            (b / f"f{i:04d}.py").write_bytes(new.replace("\n", eol).encode())
        env = {"PATH": os.environ["PATH"], "HOME": tmp, "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"}
        plain = subprocess.run(
            ["diff", "-ruN", "a", "b"], check=False, cwd=tmp, capture_output=True, env=env
        ).stdout
        git = subprocess.run(
            ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", "a", "b"],
            check=False,
            cwd=tmp,
            capture_output=True,
            env=env,
        ).stdout
    return _split(plain.decode(), "diff -ruN "), _split(git.decode(), "diff --git ")


def _split(output: str, marker: str) -> list[str]:
    sections = re.split(rf"(?m)^(?={re.escape(marker)})", output)
    return [s for s in sections if s.startswith(marker)]


def _map_headers(patch: str, fn: Callable[[re.Match[str]], str]) -> str:
    out = []
    for line in patch.split("\n"):
        m = _HUNK.match(line)
        out.append(fn(m) if m else line)
    return "\n".join(out)


def shift_numbers(patch: str, rng: random.Random) -> str:
    """Line numbers off as a model gets them wrong: by one amount for the whole patch, give or take 3."""
    base = rng.choice([-1, 1]) * rng.randint(1, 30)

    def shifted(m: re.Match[str]) -> str:
        d = base + rng.randint(-3, 3)
        a, c = max(1, int(m.group(1)) + d), max(1, int(m.group(3)) + d)
        return f"@@ -{a},{m.group(2) or 1} +{c},{m.group(4) or 1} @@{m.group(5)}"

    return _map_headers(patch, shifted)


def wreck_counts(patch: str, rng: random.Random) -> str:
    def wrecked(m: re.Match[str]) -> str:
        b = max(0, int(m.group(2) or 1) + rng.randint(-3, 3))
        d = max(0, int(m.group(4) or 1) + rng.randint(-3, 3))
        if rng.random() < 0.2:
            return f"@@ -{m.group(1)} +{m.group(3)} @@"
        return f"@@ -{m.group(1)},{b} +{m.group(3)},{d} @@{m.group(5)}"

    return _map_headers(patch, wrecked)


def strip_blank_context(patch: str) -> str:
    return re.sub(r"(?m)^ (\r?)$", r"\1", patch)


def model_headers(patch: str) -> str:
    """Headers as a model writes them: wrong names, or none at all, and no git extended lines."""
    lines = patch.split("\n")
    first_hunk = next(i for i, line in enumerate(lines) if line.startswith("@@"))
    body = lines[first_hunk:]
    if len(patch) % 2:
        body = ["--- a/some/other/name.py", "+++ b/some/other/name.py", *body]
    return "\n".join(body)


def padded(text: str, pad: int) -> str:
    return "".join(f"# padding line {i}\n" for i in range(pad)) + text


def build_corpus(n_files: int = 60, seed: int = SEED) -> list[Case]:
    """All cases for `n_files` stdlib modules: every damage for both diff tools, plus stale cases."""
    rng = random.Random(seed)
    sources = stdlib_sources(n_files, rng)
    pairs = [edit_text(text, rng, with_sql=i % 3 == 0) for i, (_, text) in enumerate(sources)]
    plain, git = _run_diffs(pairs, crlf=False)
    plain_cr, git_cr = _run_diffs(pairs, crlf=True)
    assert len(plain) == len(git) == len(plain_cr) == len(git_cr) == len(pairs), "one diff per edited file"
    cases: list[Case] = []
    for i, ((name, _), (old, new)) in enumerate(zip(sources, pairs, strict=True)):
        for tool, patch, faithful_cr in (("diff-u", plain[i], plain_cr[i]), ("git", git[i], git_cr[i])):
            cases += _variants(f"{name}[{tool}]", old, new, patch, faithful_cr, rng)
    return cases


def _variants(name: str, old: str, new: str, patch: str, faithful_cr: str, rng: random.Random) -> list[Case]:
    def crlf(text: str) -> str:
        return text.replace("\n", "\r\n")

    pad = rng.randint(1, 40)
    damaged = {
        "clean": (old, new, patch),
        "offset": (padded(old, pad), padded(new, pad), shift_numbers(patch, rng)),
        "counts": (old, new, wreck_counts(patch, rng)),
        "blank": (old, new, strip_blank_context(patch)),
        "crlf": (crlf(old), crlf(new), patch),
        "crlf-faithful": (crlf(old), crlf(new), faithful_cr),
        "headers": (old, new, model_headers(patch)),
        "all": (
            crlf(padded(old, pad)),
            crlf(padded(new, pad)),
            model_headers(strip_blank_context(wreck_counts(shift_numbers(patch, rng), rng))),
        ),
    }
    repeats = any(_count(block, padded(old, pad).split("\n")) > 1 for _, block in _old_blocks(patch) if block)
    cases = [
        Case(f"{name}/{damage}", damage, o.encode(), n.encode(), p, repeats and damage in ("offset", "all"))
        for damage, (o, n, p) in damaged.items()
    ]
    stale = make_stale(old, patch, rng)
    if stale is not None:
        cases.append(Case(f"{name}/stale", "stale", stale.encode(), stale.encode(), patch))
    return cases


def _old_blocks(patch: str) -> list[tuple[re.Match[str], list[str]]]:
    """Each hunk header with its context and removed lines, read naively (the counts here are right)."""
    blocks: list[tuple[re.Match[str], list[str]]] = []
    for line in patch.split("\n"):
        m = _HUNK.match(line)
        if m:
            blocks.append((m, []))
        elif blocks and line[:1] in (" ", "-"):
            blocks[-1][1].append(line[1:].rstrip())
    return blocks


def _count(block: list[str], lines: list[str]) -> int:
    stripped = [line.rstrip() for line in lines]
    return sum(stripped[i : i + len(block)] == block for i in range(len(stripped) - len(block) + 1))


def make_stale(old: str, patch: str, rng: random.Random) -> str | None:
    """`old` with one line that a hunk expects changed, so that hunk fits nowhere; None if that cannot be."""
    lines = old.split("\n")
    hunks = _old_blocks(patch)
    rng.shuffle(hunks)
    for m, block in hunks:
        start, count = int(m.group(1)), int(m.group(2) or 1)
        covered = [i for i in range(start - 1, start - 1 + count) if i < len(lines) and lines[i].strip()]
        if not covered:
            continue
        i = rng.choice(covered)
        stale_lines = list(lines)
        half = len(lines[i]) // 2
        stale_lines[i] = lines[i][:half] + "STALE" + lines[i][half:]
        if block and not _count(block, stale_lines):
            return "\n".join(stale_lines)
    return None
