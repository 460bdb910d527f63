"""apply_patch against GNU patch and `git apply --recount`: correctness and speed side by side.

Run: .venv/bin/python benchmarks/patch.py [N_FILES]

1. The stdlib corpus (tests/support/patch_corpus.py, N_FILES modules, seed fixed): per kind of damage, how
   many results are byte-exact for the built-in applier and for GNU patch, and how many stale patches each
   refuses.
2. Real history (tests/support/patch_history.py: this repository's own commits, up to a pinned one): per
   variant, how many results are exact, wrong (a file written that differs from the expected bytes) or
   refused, for apply_patch (the tool, GNU fallback included), GNU patch and `git apply --recount` (with
   --unidiff-zero for diffs without context, as git needs). Goal: no wrong write, and at least as many exact
   results as git.
3. Time: the whole apply_patch call through the engine (validation, preview, checkpoint saved on disk, atomic
   fsynced write, result) against spawning GNU patch on the same file, and the applier alone, text to text.
   Goal: the whole call at most 2x GNU patch. The durable write alone is shown too: on a busy disk its two
   fsyncs are most of the call.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the corpora are tests.support

from architect_nb.config.schema import AppConfig
from architect_nb.execution.build import build_engine
from architect_nb.tools.filesystem.fileio import atomic_write_bytes
from architect_nb.tools.patch.apply_patch import ApplyPatchTool, PatchError, apply_patch_text
from tests.support.patch_corpus import DAMAGES, Case, build_corpus
from tests.support.patch_history import VARIANTS, HistoryCase, build_history, history_available

TIMED_CASES = 200
REPEATS = 5
_NAMES = re.compile(r"^(diff --git |--- |\+\+\+ ).*$", re.MULTILINE)


def run_builtin(case: Case) -> tuple[float, bytes | None]:
    text = case.old.decode()
    start = time.perf_counter()
    try:
        result: bytes | None = apply_patch_text(text, case.patch, fallback=False).text.encode()
    except PatchError:
        result = None
    return time.perf_counter() - start, result


def run_gnu(exe: str, folder: Path, old: bytes, patch: str) -> tuple[float, bytes | None]:
    """GNU patch as a program runs it on a file (default options: fuzz 2). None when it reports failure."""
    target = folder / "target"
    target.write_bytes(old)
    patch_file = folder / "input.patch"
    patch_file.write_bytes(patch.encode())
    cmd = [exe, "--force", "--silent", "--no-backup-if-mismatch", "--reject-file=-", "-i", str(patch_file)]
    start = time.perf_counter()
    proc = subprocess.run([*cmd, str(target)], cwd=folder, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    return elapsed, target.read_bytes() if proc.returncode == 0 else None


def run_git(folder: Path, case: HistoryCase) -> bytes | None:
    """`git apply --recount` on the file, outside any repository (as a patch program). None when refused."""
    target = folder / "target"
    target.write_bytes(case.old)
    head, sep, body = case.patch.partition("\n@@")
    named = _NAMES.sub(
        lambda m: {"diff --git ": "diff --git a/target b/target", "--- ": "--- a/target"}.get(
            m.group(1), "+++ b/target"
        ),
        head,
    )
    (folder / "input.patch").write_bytes((named + sep + body).encode())
    cmd = ["git", "apply", "--recount", *(["--unidiff-zero"] if case.unidiff_zero else []), "input.patch"]
    proc = subprocess.run(cmd, cwd=folder, capture_output=True, check=False)
    return target.read_bytes() if proc.returncode == 0 else None


def run_tool(tool: ApplyPatchTool, folder: Path, case: HistoryCase) -> bytes | None:
    """apply_patch as the model calls it; None when refused (then the file must be untouched)."""
    target = folder / "target"
    target.write_bytes(case.old)
    result = tool.execute(path="target", patch=case.patch)
    after = target.read_bytes()
    if not result.success:
        return None if after == case.old else b"\x00changed although refused"
    return after


def stdlib_table(exe: str, n_files: int) -> None:
    cases = build_corpus(n_files=n_files)
    exact: dict[str, Counter[str]] = {"builtin": Counter(), "gnu": Counter()}
    wrong: Counter[str] = Counter()
    totals: Counter[str] = Counter(case.damage for case in cases)
    with tempfile.TemporaryDirectory(prefix="bench-gnu-") as gnu_dir:
        for case in cases:
            _, ours = run_builtin(case)
            _, theirs = run_gnu(exe, Path(gnu_dir), case.old, case.patch)
            for who, got in (("builtin", ours), ("gnu", theirs)):
                if case.must_fail:
                    exact[who][case.damage] += got is None or got == case.old
                    wrong[who] += got is not None and got != case.old
                else:
                    exact[who][case.damage] += got == case.new
                    wrong[who] += got is not None and got != case.new
    print(f"== stdlib corpus: {n_files} files, {len(cases)} cases (seed fixed)")
    print(f"{'damage':<15}{'cases':>7}{'built-in exact':>16}{'GNU patch exact':>17}")
    for damage in (*DAMAGES, "stale"):
        label = "stale (refused)" if damage == "stale" else damage
        print(f"{label:<15}{totals[damage]:>7}{exact['builtin'][damage]:>16}{exact['gnu'][damage]:>17}")
    print(f"{'total':<15}{len(cases):>7}{sum(exact['builtin'].values()):>16}{sum(exact['gnu'].values()):>17}")
    print(f"wrong results written (not refused): built-in {wrong['builtin']}, GNU patch {wrong['gnu']}")
    print()


def history_table(exe: str) -> None:
    if not history_available():
        print("== real history: skipped (this checkout has no full history up to the pinned commit)\n")
        return
    cases = build_history()
    who = ("apply_patch", "GNU patch", "git apply")
    tally: dict[str, dict[str, Counter[str]]] = {w: {v: Counter() for v in VARIANTS} for w in who}
    wrong_names: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        folders = {w: Path(tmp, str(i)) for i, w in enumerate(who)}
        for folder in folders.values():
            folder.mkdir()
        tool = ApplyPatchTool(folders["apply_patch"])
        runners: dict[str, Callable[[HistoryCase], bytes | None]] = {
            "apply_patch": lambda c: run_tool(tool, folders["apply_patch"], c),
            "GNU patch": lambda c: run_gnu(exe, folders["GNU patch"], c.old, c.patch)[1],
            "git apply": lambda c: run_git(folders["git apply"], c),
        }
        for case in cases:
            for w in who:
                got = runners[w](case)
                outcome = "refused" if got is None else "exact" if got == case.new else "wrong"
                tally[w][case.variant][outcome] += 1
                if w == "apply_patch" and outcome == "wrong":
                    wrong_names.append(case.name)
    changes = len({c.name.rsplit("/", 1)[0] for c in cases})
    print(f"== real history: {changes} changes from this repository's commits, {len(cases)} patches")
    print("   exact / wrong / refused")
    print(f"{'variant':<11}{'cases':>6}" + "".join(f"{w:>22}" for w in who))
    for variant in VARIANTS:
        n = sum(tally[who[0]][variant].values())
        cells = "".join(f"{_triple(tally[w][variant]):>22}" for w in who)
        print(f"{variant:<11}{n:>6}{cells}")
    totals = {w: sum((tally[w][v] for v in VARIANTS), Counter()) for w in who}
    print(f"{'total':<11}{len(cases):>6}" + "".join(f"{_triple(totals[w]):>22}" for w in who))
    for name in wrong_names[:10]:
        print(f"  apply_patch wrote a wrong result: {name}")
    print()


def _triple(c: Counter[str]) -> str:
    return f"{c['exact']} / {c['wrong']} / {c['refused']}"


def timing_table(exe: str, n_files: int) -> None:
    """The whole call through the engine against GNU patch on the same file, each the best of `REPEATS`
    alternating runs (so that a load spike on a shared machine does not decide a case). Dirty pages are
    written out before each timed write, so that an fsync pays for its own data, not the benchmark's."""
    cases = [c for c in build_corpus(n_files=n_files) if c.damage == "clean"][:TIMED_CASES]
    times: dict[str, list[float]] = {"builtin": [], "engine": [], "gnu": [], "write": []}
    ratios: list[float] = []
    big: tuple[int, float, float] | None = None  # (lines, engine, gnu) for the file nearest 1,400 lines
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        workspace, state, gnu_dir = Path(tmp, "ws"), Path(tmp, "state"), Path(tmp, "gnu")
        for folder in (workspace, gnu_dir):
            folder.mkdir()
        config = AppConfig.model_validate(
            {"workspace": {"root": str(workspace)}, "checkpoints": {"dir": str(state), "persist": True}}
        )
        engine = build_engine(config, mode="yolo")
        target = workspace / "target.py"
        for case in cases:
            best = {key: float("inf") for key in times}
            for _ in range(REPEATS):
                best["builtin"] = min(best["builtin"], run_builtin(case)[0])
                best["gnu"] = min(best["gnu"], run_gnu(exe, gnu_dir, case.old, case.patch)[0])
                target.write_bytes(case.old)
                engine.start_run()  # a fresh run, so that every call saves its checkpoint
                os.sync()  # its fsyncs flush its own writes only, not those of the runs before it
                start = time.perf_counter()
                result = engine.execute_tool_call("apply_patch", {"path": "target.py", "patch": case.patch})
                best["engine"] = min(best["engine"], time.perf_counter() - start)
                if not result.success or target.read_bytes() != case.new:
                    sys.exit(f"{case.name}: the engine call failed: {result.error}")
                os.sync()
                start = time.perf_counter()
                atomic_write_bytes(workspace / "alone.py", case.new)
                best["write"] = min(best["write"], time.perf_counter() - start)
            for key, value in best.items():
                times[key].append(value)
            ratios.append(best["engine"] / best["gnu"])
            lines = case.old.count(b"\n")
            if big is None or abs(lines - 1400) < abs(big[0] - 1400):
                big = (lines, best["engine"], best["gnu"])
        with contextlib.suppress(OSError):
            shutil.rmtree(state)
    median = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    lines = statistics.median(c.old.count(b"\n") for c in cases)
    print(
        f"== time: {len(cases)} clean stdlib patches (median file {lines:.0f} lines), best of {REPEATS} runs"
    )
    print(f"  built-in applier, text to text                             {median['builtin']:8.3f} ms")
    print(f"  apply_patch through the engine (checkpoint, fsynced write) {median['engine']:8.3f} ms")
    print(f"    of which the durable write alone (fsync file and folder) {median['write']:8.3f} ms")
    print(f"  GNU patch, spawned on a file (no fsync)                    {median['gnu']:8.3f} ms")
    print(
        f"whole call / GNU patch: {statistics.median(ratios):.2f}x (median of per-file ratios; goal <= 2x); "
        f"GNU patch / built-in applier: {median['gnu'] / median['builtin']:.1f}x"
    )
    if big is not None:
        print(
            f"on the file nearest 1,400 lines ({big[0]} lines): whole call {big[1] * 1e3:.3f} ms, "
            f"GNU patch {big[2] * 1e3:.3f} ms, {big[1] / big[2]:.2f}x"
        )


def main() -> None:
    n_files = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    exe = shutil.which("patch")
    if exe is None:
        sys.exit("GNU patch is not installed")
    stdlib_table(exe, n_files)
    history_table(exe)
    timing_table(exe, n_files)


if __name__ == "__main__":
    main()
