"""apply_patch against GNU patch on the stdlib patch corpus: speed and correctness side by side.

Run: .venv/bin/python benchmarks/patch.py [N_FILES]

For every corpus case it times (1) the built-in applier in process, text to text, (2) the whole ApplyPatchTool
call (read, apply, atomic write with fsync) and (3) spawning GNU patch on a file, as a program would. Then it
counts, for each kind of damage, how many results are byte-exact, and how many stale patches each refuses.
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from patch_corpus import DAMAGES, Case, build_corpus

from architect_nb.tools.patch.apply_patch import ApplyPatchTool, PatchError, apply_patch_text


def run_builtin(case: Case) -> tuple[float, bytes | None]:
    text = case.old.decode()
    start = time.perf_counter()
    try:
        result: bytes | None = apply_patch_text(text, case.patch, fallback=False).text.encode()
    except PatchError:
        result = None
    return time.perf_counter() - start, result


def run_tool(tool: ApplyPatchTool, folder: Path, case: Case) -> tuple[float, float]:
    """(preview: read, parse, apply and diff without writing; execute: the same plus the atomic write)."""
    target = folder / "target.py"
    target.write_bytes(case.old)
    start = time.perf_counter()
    with contextlib.suppress(PatchError):
        tool.preview(path="target.py", patch=case.patch)
    middle = time.perf_counter()
    tool.execute(path="target.py", patch=case.patch)
    return middle - start, time.perf_counter() - middle


def run_gnu(exe: str, folder: Path, case: Case) -> tuple[float, bytes | None]:
    target = folder / "target.py"
    target.write_bytes(case.old)
    patch_file = folder / "input.patch"
    patch_file.write_bytes(case.patch.encode())
    cmd = [exe, "--force", "--silent", "--no-backup-if-mismatch", "--reject-file=-", "-i", str(patch_file)]
    start = time.perf_counter()
    proc = subprocess.run([*cmd, str(target)], cwd=folder, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    return elapsed, target.read_bytes() if proc.returncode == 0 else None


def main() -> None:
    n_files = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    exe = shutil.which("patch")
    if exe is None:
        sys.exit("GNU patch is not installed")
    cases = build_corpus(n_files=n_files)
    times: dict[str, list[float]] = {"builtin": [], "preview": [], "tool": [], "gnu": []}
    exact: dict[str, Counter[str]] = {"builtin": Counter(), "gnu": Counter()}
    wrong: Counter[str] = Counter()
    totals: Counter[str] = Counter(case.damage for case in cases)
    tool_dir = Path(tempfile.mkdtemp(prefix="bench-tool-"))
    tool = ApplyPatchTool(tool_dir)
    with tempfile.TemporaryDirectory(prefix="bench-gnu-") as gnu_dir:
        for case in cases:
            t_builtin, ours = run_builtin(case)
            t_gnu, theirs = run_gnu(exe, Path(gnu_dir), case)
            times["builtin"].append(t_builtin)
            times["gnu"].append(t_gnu)
            t_preview, t_tool = run_tool(tool, tool_dir, case)
            times["preview"].append(t_preview)
            times["tool"].append(t_tool)
            for who, got in (("builtin", ours), ("gnu", theirs)):
                if case.must_fail:
                    exact[who][case.damage] += got is None or got == case.old
                    wrong[who] += got is not None and got != case.old
                else:
                    exact[who][case.damage] += got == case.new
                    wrong[who] += got is not None and got != case.new
    shutil.rmtree(tool_dir)

    median = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(f"corpus: {n_files} stdlib files, {len(cases)} cases (seed fixed)")
    print("median time per patch:")
    print(f"  built-in applier, text to text          {median['builtin']:8.3f} ms")
    print(f"  ApplyPatchTool.preview (read+apply+diff) {median['preview']:8.3f} ms")
    print(f"  ApplyPatchTool.execute (+ fsynced write) {median['tool']:8.3f} ms")
    print(f"  GNU patch, spawned on a file (no fsync)  {median['gnu']:8.3f} ms")
    print(
        f"speed-up vs spawning GNU patch: built-in {median['gnu'] / median['builtin']:.1f}x (goal >= 5x), "
        f"preview {median['gnu'] / median['preview']:.1f}x, execute {median['gnu'] / median['tool']:.1f}x"
    )
    print()
    print(f"{'damage':<15}{'cases':>7}{'built-in exact':>16}{'GNU patch exact':>17}")
    for damage in (*DAMAGES, "stale"):
        label = "stale (refused)" if damage == "stale" else damage
        print(f"{label:<15}{totals[damage]:>7}{exact['builtin'][damage]:>16}{exact['gnu'][damage]:>17}")
    print(f"{'total':<15}{len(cases):>7}{sum(exact['builtin'].values()):>16}{sum(exact['gnu'].values()):>17}")
    print(f"wrong results written (not refused): built-in {wrong['builtin']}, GNU patch {wrong['gnu']}")


if __name__ == "__main__":
    main()
