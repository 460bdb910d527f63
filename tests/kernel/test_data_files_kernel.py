"""A data scientist's files in real kernels (ipykernel 7 and 6): runs that write databases, pickles, arrays,
parquet, images, workbooks, archives, legacy-encoded text and a 1 GB file end with their record, the review
describes each file, and undo puts every file back byte for byte or says which it could not and why.

Before this, binary content decoded with surrogate escapes reached the redactor while the run's record was
rendered: the cell ended in a traceback and the run was never recorded, so it could not be undone.
"""

from __future__ import annotations

import gzip
import json
import pickle
import shlex
import sqlite3
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.support.agent import write_script
from tests.support.kernel import RUN_MIME, Cell, FrontEnd, kernel_params

# One kernel per version for the module (conftest's shared_kernel), handed to each test as new.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("shared_kernel", kernel_params(), indirect=True, scope="module"),
]

GIB = 1 << 30

#: Writes a new version of every kind of file; the same code runs in the kernel and in a command.
WRITE_EVERYTHING = """\
import gzip, os, pickle, sqlite3, zipfile
import numpy as np, pandas as pd
from PIL import Image
con = sqlite3.connect("sales.db"); con.execute("update sales set amount = amount * 2"); con.commit()
con.close()
wal = sqlite3.connect("events.db"); wal.execute("pragma journal_mode=wal")
wal.execute("insert into events values (3)"); wal.commit()
pickle.dump({"model": "v2", "weights": list(range(50))}, open("model.pkl", "wb"))
np.save("features.npy", np.arange(1000) * 2)
np.savez("arrays.npz", a=np.ones(10), b=np.zeros(5))
pd.DataFrame({"x": [1, 2, 3], "y": [4.0, 5.0, 6.5]}).to_parquet("table.parquet")
pd.DataFrame({"x": [1, 2]}).to_excel("book.xlsx", index=False)
Image.new("RGB", (32, 32), (200, 10, 10)).save("plot.png")
Image.new("RGB", (32, 32), (10, 200, 10)).save("photo.jpg", quality=80)
with gzip.open("export.csv.gz", "wt") as f:
    f.write("a,b\\n" * 500)
with zipfile.ZipFile("bundle.zip", "w") as z:
    z.writestr("inside.txt", "new")
open("legacy.csv", "ab").write("Zürich;5 €;ok – good\\n".encode("cp1252"))
with open("huge.bin", "wb") as f:
    for _ in range(1024):
        f.write(bytes(1 << 20))
print("written")
"""

#: What the review must say of each file (the 1 GB one is over the 100 MB limit per file).
DESCRIBED = {
    "sales.db": "Binary file (SQLite database) changed",
    "events.db": "Binary file (SQLite database) changed",
    "model.pkl": "Binary file (pickle) changed",
    "features.npy": "Binary file (NumPy array) changed",
    "arrays.npz": "Binary file (NumPy archive (ZIP)) changed",
    "table.parquet": "Binary file (Parquet file) changed",
    "book.xlsx": "Binary file (Excel workbook (ZIP)) changed",
    "plot.png": "Binary file (PNG image) changed",
    "photo.jpg": "Binary file (JPEG image) changed",
    "export.csv.gz": "Binary file (gzip data) changed",
    "bundle.zip": "Binary file (ZIP archive) changed",
    "legacy.csv": " München;3 €;“fine”\n+Zürich;5 €;ok – good",
    "huge.bin": "Not snapshotted (1.0 GB, over the 100.0 MB limit per file)",
}


@pytest.fixture
def kernel(kernel_as_new: FrontEnd) -> FrontEnd:
    return kernel_as_new


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A workspace holding one file of each kind, as a data science repository does."""
    ws = tmp_path / "ws"
    ws.mkdir()
    con = sqlite3.connect(ws / "sales.db")
    con.execute("create table sales(amount real)")
    con.executemany("insert into sales values (?)", [(i,) for i in range(100)])
    con.commit()
    con.close()
    con = sqlite3.connect(ws / "events.db")
    con.execute("create table events(id integer)")
    con.commit()
    con.close()
    (ws / "model.pkl").write_bytes(pickle.dumps({"model": "v1"}))
    np.save(ws / "features.npy", np.arange(1000))
    np.savez(ws / "arrays.npz", a=np.zeros(10))
    pd.DataFrame({"x": [1, 2]}).to_parquet(ws / "table.parquet")
    pd.DataFrame({"x": [0]}).to_excel(ws / "book.xlsx", index=False)
    Image.new("RGB", (32, 32), (0, 0, 200)).save(ws / "plot.png")
    Image.new("RGB", (32, 32), (0, 0, 0)).save(ws / "photo.jpg")
    (ws / "export.csv.gz").write_bytes(gzip.compress(b"a,b\n1,2\n"))
    with zipfile.ZipFile(ws / "bundle.zip", "w") as z:
        z.writestr("inside.txt", "old")
    (ws / "legacy.csv").write_bytes("city;price;note\nMünchen;3 €;“fine”\n".encode("cp1252"))
    return ws


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file() and p.name != "huge.bin"}


def configure(fe: FrontEnd, ws: Path, tmp: Path) -> None:
    cell = fe.run(f"%architect config workspace.root={ws} checkpoints.dir={tmp / 'state'}")
    assert cell.status == "ok", fe.describe()


def payload(cell: Cell) -> dict[str, Any]:
    [found] = cell.data(RUN_MIME)
    return dict(found)


def check_run_and_undo(
    fe: FrontEnd, cell: Cell, ws: Path, before: dict[str, bytes], extra: dict[str, str]
) -> None:
    """The run ended with its record; the review describes every file; undo restores them byte for byte."""
    assert cell.status == "ok", fe.describe()
    assert "Traceback" not in cell.text() and "UnicodeEncodeError" not in cell.text()
    record = payload(cell)
    assert record["events"][-1]["status"] == "success", record["events"][-1]
    saved = json.dumps(record)
    assert "\\udc" not in saved  # no byte reached the record as a surrogate escape
    assert (ws / "huge.bin").stat().st_size == GIB
    review = fe.run("%architect review", timeout=60).text()
    for path, said in {**DESCRIBED, **extra}.items():
        block = review.split(f"{path} (", 1)
        assert len(block) == 2, f"{path} not in the review:\n{review}"
        assert said in block[1].split("\n\n", 1)[0], f"{path}: {block[1][:300]}"
    undo = fe.run("%architect undo", timeout=120).text()
    assert "restored" in undo, undo
    assert not (ws / "huge.bin").exists(), undo  # created by the run and unchanged since: removed
    assert files(ws) == before, undo


def test_run_python_writes_every_kind_of_file_and_undo_restores_them(
    kernel: FrontEnd, data: Path, tmp_path: Path
) -> None:
    configure(kernel, data, tmp_path)
    before = files(data)
    # The kernel's folder is not the workspace here, as when a notebook sits elsewhere: the code goes there.
    body = textwrap.indent(WRITE_EVERYTHING + "wal.close()\n", "    ")
    code = (
        f"import os\n_cwd = os.getcwd()\nos.chdir({str(data)!r})\ntry:\n{body}finally:\n    os.chdir(_cwd)\n"
    )
    model = write_script(
        data,
        [
            {"tool_calls": [{"name": "run_python", "arguments": {"code": code}}]},
            {
                "expect": {"tool_result_contains": ["written", "huge.bin (1.0 GB, over the 100.0 MB limit"]},
                "tool_calls": [{"name": "run_command", "arguments": {"command": "gzip -k sales.db"}}],
            },
            {"content": "Doubled the sales and refreshed every export."},
        ],
    )
    cell = kernel.run(f"%%architect --mode yolo --model {model}\nDouble the sales", timeout=300)
    check_run_and_undo(kernel, cell, data, before, {"sales.db.gz": "Binary file (gzip data) added"})


def test_run_command_writes_every_kind_of_file_and_undo_restores_them(
    kernel: FrontEnd, data: Path, tmp_path: Path
) -> None:
    configure(kernel, data, tmp_path)
    before = files(data)
    # The connection never closes (as in a process that was killed): the WAL's side files stay.
    command = f"python -c {shlex.quote(WRITE_EVERYTHING + 'os._exit(0)')}"
    model = write_script(
        data,
        [
            {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
            {"expect": {"tool_result_contains": "written"}, "content": "Done."},
        ],
    )
    cell = kernel.run(
        f"%%architect --mode yolo --model {model}\nRefresh the data",
        timeout=300,
    )
    side_files = {
        "events.db-wal": "Binary file (SQLite journal) added",
        "events.db-shm": "Binary file (SQLite shared memory) added",
    }
    check_run_and_undo(kernel, cell, data, before, side_files)


def test_a_failure_at_the_end_of_a_run_leaves_it_recorded_and_undoable(
    kernel: FrontEnd, data: Path, tmp_path: Path
) -> None:
    configure(kernel, data, tmp_path)
    before = files(data)
    code = f"import pickle\npickle.dump({{'model': 'v3'}}, open({str(data / 'model.pkl')!r}, 'wb'))"
    model = write_script(
        data,
        [{"tool_calls": [{"name": "run_python", "arguments": {"code": code}}]}, {"content": "Saved."}],
    )
    plant = (
        "import architect_nb.notebook.runner as _runner\n"
        "_kept = _runner.RunOutput\n"
        "class _Broken:\n"
        "    @classmethod\n"
        "    def from_payload(cls, payload):\n"
        "        raise RuntimeError('planted at the end of the run')\n"
        "_runner.RunOutput = _Broken"
    )
    assert kernel.run(plant).status == "ok", kernel.describe()
    try:
        cell = kernel.run(f"%%architect --mode yolo --model {model}\nSave v3", timeout=120)
    finally:
        assert kernel.run("_runner.RunOutput = _kept").status == "ok"
    assert cell.status == "ok", kernel.describe()
    text = cell.text()
    assert "Traceback" not in text and "planted" not in text  # the details went to the log
    [run_id] = {word.strip("`.,") for word in text.split() if len(word.strip("`.,")) == 12 and word[0] != "%"}
    assert f"Run {run_id} ended, but showing its record failed (RuntimeError" in text
    assert f"`%architect undo {run_id}`" in text
    assert (data / "model.pkl").read_bytes() != before["model.pkl"]
    review = kernel.run(f"%architect review {run_id}").text()
    assert "model.pkl (modified)\nBinary file (pickle) changed" in review, review
    undo = kernel.run(f"%architect undo {run_id}").text()
    assert "restored 1 file(s)" in undo and files(data) == before, undo
