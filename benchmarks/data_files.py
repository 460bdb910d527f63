"""What undo's snapshots cost on large data files: time and store growth per MiB, and a command's overhead.

1. Snapshot cost per MiB. A workspace holds one data file (random, incompressible bytes of 1, 10 and 100 MiB,
   and a 32 MiB CSV-like text); a first whole-workspace snapshot is taken (a call that changed nothing, as
   the first command of a session does), then one step as the engine takes it around a command:
   `CheckpointStore.before(paths=None)`, the file overwritten with new bytes of the same size, `after()`.
   Printed per MiB: the first snapshot's time; the step's time less the write itself (the time of `before`
   plus the time of `after`, each measured on its own); how many bytes the snapshot store grows on disk per
   byte written (first snapshot, then step); and the time of `undo`, which puts the first version back
   (checked byte for byte). The per-file limit is `max_bytes=2**31` so every file is covered. One more row:
   a 200 MiB file *created* by the step, with the default limit (100 MiB). It is over the limit, so it must
   cost nothing in the store (checked: under 1 MiB of growth), and undo deletes it (the run created it).
   The CSV text is 8 MiB of distinct lines repeated (files over 1 MiB are stored uncompressed).
2. Run overhead. The same Python script writes 200 MiB (20 files of 10 MiB of random bytes into data/) and
   updates a SQLite database of the workspace, run (a) directly as `bash -c` in a subprocess and (b) through
   the real ExecutionEngine as a `run_command` call (yolo, sandbox off, the default 100 MiB limit per file and
   1 GiB per run, so all 200 MiB are snapshotted). Best of 3 each, alternating, a fresh
   workspace and state folder each run, the page cache flushed (`os.sync`) before each. The engine has made
   one call (`true`) in the workspace before the timed one, so the store exists and holds the workspace as
   it was. Printed: both times, (b)/(a), how much the store grew, and the undo of the last (b) run (one
   only: an undo takes about as long as the run; checked: the workspace is back byte for byte).
3. A summary line per figure.

MiB is 2**20 bytes. There is no time goal yet: the script exits non-zero only when a measurement is broken
(a call failing, a file not covered that should be, an undo that does not give the bytes back) or a file over
the limit reaches the store.
Run: `.venv/bin/python benchmarks/data_files.py` (about 2 minutes and 1.5 GB of temporary disk).
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from architect_nb.config.schema import AppConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.checkpoints.files import CheckpointFiles
from architect_nb.execution.checkpoints.store import DEFAULT_MAX_BYTES, CheckpointStore

MIB = 2**20
RUNS = 3
DATA_FILES, DATA_FILE_MIB = 20, 10
CSV_MIB = 32  # compressible text costs about 3x more per MiB than random bytes: smaller keeps the run short
SCRIPT = f"""\
import os, sqlite3
os.makedirs("data", exist_ok=True)
for n in range({DATA_FILES}):
    with open(f"data/part{{n:02d}}.bin", "wb") as f:
        f.write(os.urandom({DATA_FILE_MIB * MIB}))
db = sqlite3.connect("results.db")
db.execute("UPDATE results SET score = score * 2 WHERE id % 7 = 0")
db.execute("INSERT INTO results (name, score) VALUES ('run', 1.0)")
db.commit()
db.close()
"""


def fail(message: str) -> None:
    sys.exit(f"broken measurement: {message}")


def disk_bytes(path: Path) -> int:
    """Bytes the files under `path` take on disk (allocated blocks)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def csv_text(size: int) -> bytes:
    rng = random.Random(5)
    lines = [b"id,timestamp,sensor,temperature,humidity,status\n"]
    unique = 0
    while unique < 8 * MIB:
        line = (
            f"{len(lines)},2026-03-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:"
            f"{rng.randrange(60):02d}:{rng.randrange(60):02d},s{rng.randrange(500)},"
            f"{rng.uniform(-10, 40):.3f},{rng.uniform(0, 100):.2f},"
            f"{rng.choice(('ok', 'ok', 'ok', 'warn', 'fail'))}\n"
        ).encode()
        lines.append(line)
        unique += len(line)
    block = b"".join(lines)
    return (block * (size // len(block) + 1))[:size]


@dataclass
class Row:
    label: str
    mib: float
    first_s: float  # the first snapshot of the workspace (the file as found)
    first_growth: int  # bytes the store grew by it
    step_s: float  # before + after, less the write
    write_s: float
    step_growth: int
    undo_s: float | None  # None: nothing to undo (the file is not covered)
    created: bool  # the step created the file: the first snapshot did not see it


def snapshot_row(
    tmp: Path, label: str, old: bytes | None, new: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> Row:
    """One file: `old` (None: absent) before the step, `new` after it."""
    workspace, state = tmp / "ws", tmp / "state"
    workspace.mkdir()
    (workspace / "README.md").write_text("a data workspace\n")
    target = workspace / "data.bin"
    if old is not None:
        target.write_bytes(old)
    store = CheckpointStore(workspace, on_disk=CheckpointFiles(state, workspace), max_bytes=max_bytes)
    if (why := store.available()) is not None:
        fail(f"no snapshots here: {why}")
    empty = disk_bytes(state)
    os.sync()
    started = time.perf_counter()
    mark = store.before("first", step=1, call_id="c0", tool="run_command", paths=None)
    store.after(mark)
    first_s = time.perf_counter() - started
    seen = disk_bytes(state)
    os.sync()
    t0 = time.perf_counter()
    mark = store.before("run", step=1, call_id="c1", tool="run_command", paths=None)
    t1 = time.perf_counter()
    target.write_bytes(new)
    t2 = time.perf_counter()
    changed = store.after(mark)
    t3 = time.perf_counter()
    step_growth = disk_bytes(state) - seen
    covered = len(new) <= max_bytes
    if changed != ["data.bin"]:
        fail(f"{label}: the step recorded {changed}")
    if not covered and ("data.bin" not in store.left_out("run") or step_growth > MIB):
        fail(f"{label}: the file over the limit is not left out ({step_growth} bytes stored)")
    os.sync()
    started = time.perf_counter()
    report = store.undo("run")
    undo_s: float | None = time.perf_counter() - started
    if not report.ok or (target.read_bytes() if target.exists() else b"") != (old or b""):
        fail(f"{label}: undo did not give the first version back ({report})")
    shutil.rmtree(workspace)
    shutil.rmtree(state)
    step_s, write_s = (t1 - t0) + (t3 - t2), t2 - t1
    grew = seen - empty
    return Row(label, len(new) / MIB, first_s, grew, step_s, write_s, step_growth, undo_s, old is None)


def snapshot_costs(tmp: Path) -> list[Row]:
    rows = []
    for mib in (1, 10, 100):
        old, new = os.urandom(mib * MIB), os.urandom(mib * MIB)
        rows.append(snapshot_row(tmp, f"random {mib} MiB", old, new, max_bytes=2**31))
    text = csv_text(CSV_MIB * MIB)
    half = CSV_MIB * MIB // 2
    edited = text[:half] + text[half:].replace(b",ok\n", b",OK\n")  # rows of the second half change
    rows.append(snapshot_row(tmp, f"CSV {CSV_MIB} MiB", text, edited, max_bytes=2**31))
    del text, edited
    rows.append(snapshot_row(tmp, "random 200 MiB, new, over the limit", None, os.urandom(200 * MIB)))
    return rows


def fresh_workspace(root: Path) -> dict[str, str]:
    """A workspace with the script and a database; returns its files' digests."""
    root.mkdir()
    (root / "make_data.py").write_text(SCRIPT)
    db = sqlite3.connect(root / "results.db")
    db.execute("CREATE TABLE results (id INTEGER PRIMARY KEY, name TEXT, score REAL)")
    rng = random.Random(1)
    db.executemany(
        "INSERT INTO results (name, score) VALUES (?, ?)",
        ((f"experiment-{n}", rng.random()) for n in range(50_000)),
    )
    db.commit()
    db.close()
    return digests(root)


def digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def run_direct(tmp: Path, command: str) -> float:
    workspace = tmp / "direct"
    fresh_workspace(workspace)
    os.sync()
    started = time.perf_counter()
    subprocess.run(["bash", "-c", command], cwd=workspace, check=True)
    elapsed = time.perf_counter() - started
    shutil.rmtree(workspace)
    return elapsed


def run_engine(tmp: Path, command: str, *, undo: bool) -> tuple[float, float | None, int]:
    """Seconds of the call through the engine, seconds of its undo (if `undo`), bytes the store grew."""
    workspace, state = tmp / "engine", tmp / "engine-state"
    original = fresh_workspace(workspace)
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(workspace)},
            "checkpoints": {"dir": str(state), "persist": True},
            "sandbox": {"mode": "off"},
        }
    )
    engine = build_engine(config, mode="yolo")
    warm = engine.execute_tool_call("run_command", {"command": "true"})
    if not warm.success:
        fail(f"the engine cannot run a command: {warm.error}")
    grown_from = disk_bytes(state)
    run_id = engine.start_run()
    os.sync()
    started = time.perf_counter()
    result = engine.execute_tool_call("run_command", {"command": command, "timeout": 300})
    elapsed = time.perf_counter() - started
    if not result.success:
        fail(f"the command failed through the engine: {result.error or result.output}")
    growth = disk_bytes(state) - grown_from
    if len(engine.checkpoints.files(run_id)) != DATA_FILES + 1:
        fail(f"the engine recorded {engine.checkpoints.files(run_id)}")
    undo_s = None
    if undo:
        os.sync()
        started = time.perf_counter()
        report = engine.checkpoints.undo(run_id)
        undo_s = time.perf_counter() - started
        if not report.ok or digests(workspace) != original:
            fail(f"the engine's undo did not give the workspace back ({report})")
    shutil.rmtree(workspace)
    shutil.rmtree(state)
    return elapsed, undo_s, growth


def run_overhead(tmp: Path) -> tuple[float, float, float, int]:
    """Best seconds directly and through the engine, the undo of the last engine run (an undo takes as long
    as a run, so one is measured), and the bytes the store grew in the fastest engine run."""
    command = f"'{sys.executable}' make_data.py"
    direct: list[float] = []
    engine: list[tuple[float, float | None, int]] = []
    for n in range(RUNS):
        direct.append(run_direct(tmp, command))
        engine.append(run_engine(tmp, command, undo=n == RUNS - 1))
    undo_s = engine[-1][1]
    assert undo_s is not None
    fastest = min(engine, key=lambda sample: sample[0])
    return min(direct), fastest[0], undo_s, fastest[2]


def ms_per_mib(seconds: float, mib: float) -> str:
    return f"{seconds * 1000 / mib:7.1f}"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-data-") as name:
        tmp = Path(os.path.realpath(name))
        started = time.perf_counter()
        rows = snapshot_costs(tmp)
        print("1. Snapshot cost per MiB (whole-workspace snapshots, as around a command)")
        print(
            f"{'file':38} {'first ms/MiB':>12} {'grew x':>7} {'step ms/MiB':>12} {'write ms/MiB':>12} "
            f"{'grew x':>7} {'undo ms/MiB':>12}"
        )
        for row in rows:
            undo = ms_per_mib(row.undo_s, row.mib) if row.undo_s is not None else "not covered"
            first, first_grew = ms_per_mib(row.first_s, row.mib), f"{row.first_growth / (row.mib * MIB):.2f}"
            if row.created:
                first, first_grew = "-", "-"
            print(
                f"{row.label:38} {first:>12} {first_grew:>7} {ms_per_mib(row.step_s, row.mib):>12} "
                f"{ms_per_mib(row.write_s, row.mib):>12} {row.step_growth / (row.mib * MIB):7.2f} {undo:>12}"
            )
        print(
            "   (first: the first snapshot of the workspace with the file in it; step: before + after less "
            "the write; grew x: store bytes per byte of the file)"
        )
        direct_s, engine_s, undo_s, growth = run_overhead(tmp)
        total_mib = DATA_FILES * DATA_FILE_MIB
        print(f"\n2. Run overhead: a script writing {total_mib} MiB and updating SQLite, best of {RUNS}")
        print(f"   (a) directly        {direct_s:7.2f} s")
        print(f"   (b) run_command     {engine_s:7.2f} s   (b)/(a) = {engine_s / direct_s:.1f}x")
        print(f"   undo of (b)         {undo_s:7.2f} s   (the last run's)")
        print(f"   the store grew {growth / MIB:.0f} MiB in (b)")
        big = next(r for r in rows if r.label.startswith("random 100"))
        csv = next(r for r in rows if r.label.startswith("CSV"))
        over = rows[-1]
        print("\nSummary")
        print(
            f"- snapshot step, incompressible data: {big.step_s * 1000 / big.mib:.0f} ms/MiB "
            f"(first snapshot {big.first_s * 1000 / big.mib:.0f} ms/MiB), CSV text: "
            f"{csv.step_s * 1000 / csv.mib:.0f} ms/MiB"
        )
        print(
            f"- store growth per MiB written: {big.step_growth / (big.mib * MIB):.2f} MiB incompressible, "
            f"{csv.step_growth / (csv.mib * MIB):.2f} MiB CSV"
        )
        print(
            f"- undo: {(big.undo_s or 0) * 1000 / big.mib:.0f} ms/MiB incompressible, "
            f"{(csv.undo_s or 0) * 1000 / csv.mib:.0f} ms/MiB CSV"
        )
        print(
            f"- a 200 MiB file over the default {DEFAULT_MAX_BYTES // MIB} MiB limit: the store grew "
            f"{over.step_growth / MIB:.1f} MiB, the step took "
            f"{over.step_s:.1f} s"
        )
        print(
            f"- run overhead, {total_mib} MiB written by a command: {engine_s / direct_s:.1f}x "
            f"({direct_s:.2f} s directly, {engine_s:.2f} s through the engine); its undo {undo_s:.2f} s"
        )
        print(f"(benchmark took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
