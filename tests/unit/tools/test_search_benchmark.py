"""benchmarks/search.py runs and finds what rg finds (here on a small tree; the real run is `make bench`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "search.py"


@pytest.mark.slow
def test_benchmark_agrees_with_rg_on_a_small_tree(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "test_a.py").write_text(
        "class LoudWarning(UserWarning):\n    pass\n\n"
        "self.assertEqual(1, 1)\nself.assertEqual(2, 2)\nABC123DEF\n"
    )
    (tmp_path / "pkg" / "util.py").write_text("self.assertEqual(3, 3)\n")
    (tmp_path / "pkg" / "blob.bin").write_bytes(b"self.assertEqual\x00")
    (tmp_path / ".hidden.py").write_text("class B(Warning):\n")
    out = subprocess.run(
        [sys.executable, str(BENCHMARK), "--tree", str(tmp_path), "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert sum(" same (" in line for line in lines) == 6, out.stdout
    assert "same (3 lines)" in next(line for line in lines if line.startswith("common literal"))
    assert "same (2 lines)" in next(line for line in lines if line.startswith("rare regex"))
