"""Command quality gates: run in the workspace in their own process group, reported, stopped at their timeout
with everything they started."""

from __future__ import annotations

import os
import time
from pathlib import Path

from architect_nb.config.schema import QualityGateConfig
from architect_nb.execution.gates.quality_gates import gates_passed, run_quality_gates


def gate(**fields: object) -> QualityGateConfig:
    return QualityGateConfig.model_validate(fields)


def test_gates_run_in_order_and_report(tmp_path: Path) -> None:
    results = run_quality_gates(
        [
            gate(name="ok", command="echo fine", required=True),
            gate(name="lint", command="echo 'E1 bad' && exit 1", required=False),
            gate(name="slow", command="sleep 30", required=True, timeout=1),
            gate(name="where", command="pwd", required=True),
        ],
        tmp_path,
    )
    assert [(r.name, r.passed, r.exit_code) for r in results] == [
        ("ok", True, 0),
        ("lint", False, 1),
        ("slow", False, None),
        ("where", True, 0),
    ]
    assert results[1].report() == "[Quality gate lint: failed (optional)]\nE1 bad"
    assert "timed out after 1s" in results[2].output
    assert results[3].output == str(tmp_path)
    assert not gates_passed(results)
    assert gates_passed([results[0], results[1], results[3]])


def test_a_background_job_neither_holds_the_gate_nor_outlives_it(tmp_path: Path) -> None:
    """The gate's output is a file, not a pipe: a job left running cannot keep the gate waiting."""
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    (result,) = run_quality_gates(
        [gate(name="bg", command=f"sleep 60 & echo $! > {pid_file}; echo done", timeout=30)], tmp_path
    )
    assert result.passed and result.output == "done"
    assert time.monotonic() - started < 20
    pid = int(pid_file.read_text())
    for _ in range(50):  # the killed sleep is reaped by init; give it a moment
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the gate's background job {pid} is still running")


def test_long_output_keeps_its_end(tmp_path: Path) -> None:
    (result,) = run_quality_gates([gate(name="loud", command="seq 1 5000; echo LAST; exit 3")], tmp_path)
    assert not result.passed and result.exit_code == 3
    assert result.output.startswith("[...]\n") and result.output.endswith("LAST")
    assert len(result.output) <= 4100
