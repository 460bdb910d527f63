"""Undo and review on a data scientist's files: databases, pickles, images, archives and files too large to
snapshot. A binary file is described (kind, size, content id), never decoded; a file over the limits costs
nothing in the snapshot store; undo restores byte for byte, or says which file it could not and why."""

from __future__ import annotations

import gzip
import os
import pickle
import shlex
import sqlite3
import subprocess
import zlib
from pathlib import Path

import pytest

from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.redaction import Redactor
from tests.support.engine import engine_for
from tests.support.engine import run_tool as run

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82"
)


def python(code: str) -> str:
    return f"python3 -c {shlex.quote(code)}"


@pytest.fixture
def data(workspace: Path) -> Path:
    con = sqlite3.connect(workspace / "sales.db")
    con.execute("create table sales(amount real)")
    con.executemany("insert into sales values (?)", [(i,) for i in range(200)])
    con.commit()
    con.close()
    (workspace / "model.pkl").write_bytes(pickle.dumps({"weights": bytes(range(256))}))
    (workspace / "plot.png").write_bytes(PNG)
    (workspace / "notes.md").write_text("a\n")
    return workspace


def snapshot_bytes(data: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(data.iterdir()) if p.is_file()}


def store_size(engine: ExecutionEngine) -> int:
    """The bytes of every object in the run's snapshot store, loose or packed."""
    git_dir = engine.checkpoints.shadow.git_dir
    return sum(f.stat().st_size for f in (git_dir / "objects").rglob("*") if f.is_file())


def test_binary_changes_are_described_and_undone_byte_for_byte(data: Path) -> None:
    before = snapshot_bytes(data)
    engine = engine_for(data)
    code = (
        "import sqlite3, pickle, gzip\n"
        "c = sqlite3.connect('sales.db'); c.execute('update sales set amount = amount * 2'); c.commit()\n"
        "pickle.dump({'weights': bytes(range(255, -1, -1))}, open('model.pkl', 'wb'))\n"
        "open('plot.png', 'ab').write(bytes(range(256)))\n"
        "gzip.open('export.csv.gz', 'wb').write(b'a,b\\n' * 1000)\n"
        "open('notes.md', 'a').write('b\\n')\n"
    )
    result = run(engine, "run_command", command=python(code))
    assert set(result.changed_files) == {
        "sales.db", "model.pkl", "plot.png", "export.csv.gz", "notes.md"
    }  # fmt: skip
    review = {c.path: c for c in engine.checkpoints.review(engine.run_id)}
    assert review["sales.db"].diff.startswith("Binary file (SQLite database) changed: ")
    assert review["model.pkl"].diff.startswith("Binary file (pickle) changed: ")
    assert review["plot.png"].diff.startswith(f"Binary file (PNG image) changed: {len(PNG)} bytes → ")
    assert review["export.csv.gz"].diff.startswith("Binary file (gzip data) added: ")
    assert review["export.csv.gz"].status == "added"
    assert "+b" in review["notes.md"].diff  # text is still a diff
    # The content id is the blob's: the same content, the same id.
    blob = subprocess.run(
        ["git", "hash-object", "--no-filters", str(data / "plot.png")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (
        f"→ {len(PNG) + 256} bytes, id " in review["plot.png"].diff and blob[:10] in review["plot.png"].diff
    )
    # Nothing of the bytes reaches text: no NUL, no surrogate escape, and every place that saves or shows it
    # (redaction, JSON, UTF-8) takes it.
    for change in review.values():
        assert "\x00" not in change.diff and not any(0xD800 <= ord(c) <= 0xDFFF for c in change.diff)
        Redactor({"X_API_KEY": "abcdefgh123"}).redact(change.diff).encode("utf-8")
    report = engine.checkpoints.undo(engine.run_id)
    assert report.ok, str(report)
    assert snapshot_bytes(data) == before


def test_a_file_over_the_limit_costs_nothing_in_the_store(data: Path) -> None:
    engine = engine_for(data, **{"checkpoints.max_file_bytes": 1 << 20})
    run(engine, "run_command", command="true")  # the workspace as it was, stored once
    base = store_size(engine)
    run(engine, "run_command", step=2, command="head -c 5000000 /dev/urandom > blob.bin")
    assert store_size(engine) - base < 100_000, "the 5 MB file reached the snapshot store"
    assert engine.checkpoints.left_out(engine.run_id) == {
        "blob.bin": "4.8 MB, over the 1.0 MB limit per file"
    }
    [change] = [c for c in engine.checkpoints.review(engine.run_id) if c.path == "blob.bin"]
    assert change.status == "added" and change.diff.startswith(
        "Not snapshotted (4.8 MB, over the 1.0 MB limit"
    )
    assert "Undo removes it if it is still as the run left it" in change.diff
    report = engine.checkpoints.undo(engine.run_id)
    assert report.removed == ["blob.bin"] and not (data / "blob.bin").exists()


def test_a_file_that_grows_past_the_limit_is_named_and_kept(data: Path) -> None:
    engine = engine_for(data, **{"checkpoints.max_file_bytes": 100_000})
    result = run(engine, "run_command", command="head -c 200000 /dev/zero >> sales.db")
    assert "sales.db" in result.changed_files
    assert "Undo cannot restore sales.db" in result.output
    report = engine.checkpoints.undo(engine.run_id)
    assert "Not restored: sales.db (" in str(report) and (data / "sales.db").stat().st_size > 200_000


def test_the_run_budget_bounds_what_its_calls_keep(data: Path) -> None:
    engine = engine_for(data, **{"checkpoints.max_run_bytes": 1_500_000})
    run(engine, "run_command", command="for i in 1 2 3; do head -c 600000 /dev/urandom > part$i.bin; done")
    left_out = engine.checkpoints.left_out(engine.run_id)
    assert list(left_out.values()) == ["585.9 KB, past the run's snapshot budget"], left_out
    assert len(engine.checkpoints.files(engine.run_id)) == 3
    report = engine.checkpoints.undo(engine.run_id)
    assert report.ok and not list(data.glob("part*.bin")), str(report)  # created files all go, kept or not


def test_a_binary_file_written_after_the_run_is_left_alone(data: Path) -> None:
    engine = engine_for(data)
    run(engine, "run_command", command=python("open('model.pkl', 'ab').write(b'\\x00run')"))
    mine = (data / "model.pkl").read_bytes() + b"\x00person"
    (data / "model.pkl").write_bytes(mine)
    report = engine.checkpoints.undo(engine.run_id)
    assert report.conflicts == ["model.pkl"] and (data / "model.pkl").read_bytes() == mine


def test_a_large_file_changed_after_the_run_is_left_alone(data: Path) -> None:
    engine = engine_for(data, **{"checkpoints.max_file_bytes": 1000})
    run(engine, "run_command", command="head -c 5000 /dev/zero > big.bin")
    with open(data / "big.bin", "ab") as f:
        f.write(b"the person's own line")
    os.utime(data / "big.bin", ns=(1, 1))
    report = engine.checkpoints.undo(engine.run_id)
    assert (data / "big.bin").exists() and "changed since the run" in str(report)


def test_sqlite_in_wal_mode_with_its_side_files_is_undone(data: Path) -> None:
    before = snapshot_bytes(data)
    engine = engine_for(data)
    code = (
        "import sqlite3, os\n"
        "c = sqlite3.connect('sales.db'); c.execute('pragma journal_mode=wal')\n"
        "c.execute('update sales set amount = -amount'); c.commit()\n"
        "assert os.path.exists('sales.db-wal') and os.path.exists('sales.db-shm')\n"
        "os._exit(0)\n"  # the connection never closes: its -wal and -shm stay, as under a live kernel
    )
    run(engine, "run_command", command=python(code))
    review = {c.path: c.diff for c in engine.checkpoints.review(engine.run_id)}
    assert review["sales.db-wal"].startswith("Binary file (SQLite journal) added")
    assert review["sales.db-shm"].startswith("Binary file (SQLite shared memory) added")
    assert engine.checkpoints.undo(engine.run_id).ok
    assert snapshot_bytes(data) == before
    assert sqlite3.connect(data / "sales.db").execute("select sum(amount) from sales").fetchone() == (
        19900.0,
    )


def test_compressed_text_and_zlib_streams_are_binary(data: Path) -> None:
    (data / "t.csv.gz").write_bytes(gzip.compress(b"x,y\n"))
    (data / "blob.z").write_bytes(zlib.compress(b"hello" * 100))
    engine = engine_for(data)
    run(engine, "run_command", command="rm t.csv.gz && printf 'x\\0y' > blob.z")
    review = {c.path: c for c in engine.checkpoints.review(engine.run_id)}
    assert review["t.csv.gz"].diff.startswith("Binary file (gzip data) deleted: was ")
    assert review["blob.z"].diff.startswith("Binary file (binary data) changed: ")


def test_the_approval_says_before_the_call_what_undo_cannot_restore(data: Path) -> None:
    from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer

    (data / "big.csv").write_text("a,b\n" + "1,2\n" * 100_000)  # 400 KB
    config = load_config(
        overrides={"workspace.root": str(data), "checkpoints.max_file_bytes": 100_000}, environ={}
    )
    confirmer = ScriptedConfirmer(default="deny")
    engine = build_engine(config, mode="confirm-all", confirmer=confirmer)
    engine.execute_tool_call("edit_file", {"path": "big.csv", "old_str": "a,b\n", "new_str": "a,c\n"})
    engine.execute_tool_call("edit_file", {"path": "notes.md", "old_str": "a\n", "new_str": "b\n"})
    engine.execute_tool_call("run_command", {"command": "touch x"})
    edit_big, edit_small, command = confirmer.requests
    assert edit_big.undo == "undo cannot restore big.csv (390.6 KB): over the 97.7 KB snapshot limit per file"
    assert "undo: undo cannot restore big.csv" in edit_big.render()
    assert edit_small.undo == ""
    assert command.undo.startswith("undo restores files up to 97.7 KB each and 1.0 GB in all per run")
    assert (data / "big.csv").read_text().startswith("a,b\n")  # denied: nothing changed


def test_a_legacy_encoded_text_file_is_reviewed_as_text(data: Path) -> None:
    (data / "prices.csv").write_bytes("city;price;note\nMünchen;3 €;“fine”\n".encode("cp1252"))
    (data / "short.csv").write_bytes("München;3 €\n".encode("cp1252"))
    engine = engine_for(data)
    line, short = "Zürich;5 €;ok – good\n".encode("cp1252"), "Köln;4 €\n".encode("cp1252")
    code = f"open('prices.csv', 'ab').write({line!r}); open('short.csv', 'ab').write({short!r})"
    run(engine, "run_command", command=python(code))
    review = {c.path: c.diff for c in engine.checkpoints.review(engine.run_id)}
    assert " München;3 €;“fine”\n+Zürich;5 €;ok – good\n" in review["prices.csv"]
    # Too short to tell cp1252 from cp850 and others: described, never shown with guessed letters.
    assert review["short.csv"].startswith(
        "Text file (encoding not certain) changed: 12 bytes → 21 bytes, id "
    )
    assert all("\ufffd" not in diff for diff in review.values())


def test_write_file_over_a_binary_file_says_what_it_replaces(data: Path) -> None:
    from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer

    before = (data / "model.pkl").read_bytes()
    confirmer = ScriptedConfirmer(default="approve")
    config = load_config(overrides={"workspace.root": str(data)}, environ={})
    engine = build_engine(config, mode="confirm-all", confirmer=confirmer)
    result = engine.execute_tool_call("write_file", {"path": "model.pkl", "content": "now text\n"})
    said = f"binary file (pickle, {len(before)} bytes)"
    assert result.success and result.output.endswith(f"It replaced a {said}.")
    [asked] = confirmer.requests
    assert asked.preview is not None and asked.preview.startswith(f"A {said}: it is replaced whole")
    assert engine.checkpoints.undo(engine.run_id).ok and (data / "model.pkl").read_bytes() == before
