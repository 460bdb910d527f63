"""The notebook check's rules without a kernel: normalisations, numbers, values, images and errors (each a
change caught and a non-change let through), cell matching, and the before side written from a run's
snapshots. tests/kernel/test_notebook_check.py runs the same rules through real kernels."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest

from architect_nb.checks.compare import compare_sides
from architect_nb.checks.kernel_helper import VALUE_MIME
from architect_nb.checks.normalise import normalise_text, split_warnings
from architect_nb.checks.outputs import Item
from architect_nb.checks.rules import Tolerance, compare_items
from tests.unit.execution.test_checkpoints import engine_for, run

TOL = Tolerance()


def test_addresses_timings_and_progress_bars_are_normalised_away() -> None:
    a = "<Foo object at 0x7f3a12345678>\nCPU times: user 3 ms\nWall time: 4.1 ms\n"
    a += " 10%|█   | 1/10 [00:00<00:01, 9.1it/s]\rdone"
    b = "<Foo object at 0x55d0aabbccdd>\nCPU times: user 9 ms\nWall time: 12 ms\n"
    b += "100%|████| 10/10 [00:01<00:00, 9.9it/s]\rdone"
    assert normalise_text(a) == normalise_text(b) == "<Foo object at 0x…>\ndone"
    assert normalise_text("value at 0x12") == "value at 0x12"  # a short hex number is data, not an address


def test_warnings_are_taken_out_of_stderr() -> None:
    rest, warnings = split_warnings("/x/a.py:3: FutureWarning: old API\n  df.append(row)\nreal problem")
    assert (rest, warnings) == ("real problem", ["FutureWarning: old API"])


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        ("0.30000000000000004", "0.3", False),
        ("total: 10583.59", "total: 10583.6", True),
        ("region: North", "region: Nrth", True),
        ("1 2 3", "1 2 3 4", True),
    ],
)
def test_texts_compare_their_numbers_within_the_tolerance(before: str, after: str, changed: bool) -> None:
    assert (compare_items(Item("text", before), Item("text", after), TOL) is not None) == changed


def _frame(values: list[Any], dtype: str = "float64", index: list[Any] | None = None) -> Item:
    index = index if index is not None else list(range(len(values)))
    return Item(
        "value",
        {
            "kind": "dataframe",
            "shape": [len(values), 1],
            "columns": ["x"],
            "dtypes": [dtype],
            "index": {"name": "None", "dtype": "int64", "values": index},
            "data": [values],
        },
    )


def test_dataframes_compare_values_dtypes_and_index() -> None:
    assert compare_items(_frame([0.1 + 0.2, "nan"]), _frame([0.3, "nan"]), TOL) is None
    assert compare_items(_frame([1.5]), _frame([2.5]), TOL) == "column 'x': row 0: 1.5 became 2.5"
    assert "dtypes changed" in (compare_items(_frame([1], "int64"), _frame([1.0]), TOL) or "")
    assert "index changed" in (compare_items(_frame([1.0]), _frame([1.0], index=[5]), TOL) or "")


def _png(draw: bool, level: int = 6) -> str:
    from PIL import Image

    image = Image.new("RGB", (50, 50), "white")
    if draw:
        image.paste((0, 0, 255), (0, 0, 10, 10))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=level)
    return base64.b64encode(out.getvalue()).decode()


def test_images_compare_pixels_not_bytes() -> None:
    assert _png(False, 1) != _png(False, 9)
    assert compare_items(Item("image", _png(False, 1)), Item("image", _png(False, 9)), TOL) is None
    assert compare_items(Item("image", _png(False)), Item("image", _png(True)), TOL) == (
        "4.00% of the image's pixels changed"
    )
    loose = Tolerance(image_threshold=0.05)
    assert compare_items(Item("image", _png(False)), Item("image", _png(True)), loose) is None


def test_errors_compare_type_and_message() -> None:
    assert compare_items(Item("error", ("KeyError", "'a'")), Item("error", ("KeyError", "'a'")), TOL) is None
    assert compare_items(Item("error", ("KeyError", "'a'")), Item("error", ("KeyError", "'b'")), TOL)
    assert compare_items(Item("error", ("KeyError", "'a'")), Item("text", "1"), TOL)


def _cell(index: int, cid: str | None, text: str) -> dict[str, Any]:
    output = {"output_type": "execute_result", "data": {"text/plain": text}, "metadata": {}}
    return {"index": index, "id": cid, "outputs": [output]}


def _run(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"cells": list(cells), "compared": [], "failure": None}


def test_cells_match_by_id_then_by_order() -> None:
    before = _run(_cell(0, "a", "1"), _cell(1, "b", "2"), _cell(2, "gone", "3"))
    after = _run(_cell(0, "b", "2"), _cell(1, "a", "1"), _cell(2, "new", "4"))
    by_id = compare_sides(before, after, notebook="n.ipynb", tolerance=TOL)
    assert by_id.same and by_id.added == ["cell 3 (new)"] and by_id.removed == ["cell 3 (gone)"]
    no_ids = compare_sides(
        _run(_cell(0, None, "1"), _cell(1, None, "2")), _run(_cell(0, None, "1"), _cell(1, None, "3")),
        notebook="n.ipynb", tolerance=TOL,
    )  # fmt: skip
    assert [d.where for d in no_ids.differences] == ["cell 2"]


def test_a_value_bundle_is_compared_as_a_value_not_its_text() -> None:
    bundle = {"kind": "array", "shape": [1], "dtype": "float64", "data": [0.30000000000000004]}
    a = {"output_type": "execute_result", "metadata": {}, "data": {VALUE_MIME: bundle, "text/plain": "x"}}
    b = {**a, "data": {VALUE_MIME: {**bundle, "data": [0.3]}, "text/plain": "y"}}
    result = compare_sides(
        _run({"index": 0, "id": "a", "outputs": [a]}), _run({"index": 0, "id": "a", "outputs": [b]}),
        notebook="n.ipynb", tolerance=TOL,
    )  # fmt: skip
    assert result.same, result.text()


def test_write_before_puts_back_what_the_run_changed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "data").mkdir(parents=True)
    (workspace / "lib.py").write_text("X = 1\n")
    (workspace / "data" / "raw.csv").write_text("a\n1\n")
    (workspace / ".gitignore").write_text("data/\n")  # snapshots never hold it; the copy does
    engine = engine_for(workspace)
    run(engine, "write_file", path="lib.py", content="X = 2\n")
    run(engine, "write_file", path="new.py", content="Y = 1\n", step=2)
    before = tmp_path / "before"
    assert engine.checkpoints.write_before(engine.run_id, before) == []
    assert (before / "lib.py").read_text() == "X = 1\n"
    assert not (before / "new.py").exists()
    assert (before / "data" / "raw.csv").read_text() == "a\n1\n"
    assert (workspace / "lib.py").read_text() == "X = 2\n"  # the workspace itself is untouched


def test_the_brief_report_for_the_model_keeps_the_first_difference_within_its_size() -> None:
    long = "\n".join(f"row {i}: {i * 1.5}" for i in range(400))
    cells = [_cell(i, f"c{i}", f"{long}\nend {i}") for i in range(30)]
    changed = [_cell(i, f"c{i}", f"{long}\nend {i + 1}") for i in range(30)]
    result = compare_sides(_run(*cells), _run(*changed), notebook="n.ipynb", tolerance=TOL)
    brief = result.brief()
    assert len(brief) <= 1900 and len(result.text()) > 10_000
    assert brief.startswith("n.ipynb: 30 output(s) changed; the first is cell 1 (c0).")
    assert "First difference: cell 1 (c0): 0 became 1" in brief and "  after:  row 0: 0.0" in brief


def test_a_notebook_outside_the_folders_or_the_workspace_is_refused_before_any_kernel(tmp_path: Path) -> None:
    from architect_nb.checks import compare_notebook_runs
    from architect_nb.config.schema import QualityGateConfig
    from architect_nb.execution.gates.notebook_checks import run_notebook_gate

    for name in ("../x.ipynb", str(tmp_path.parent / "x.ipynb")):
        result = compare_notebook_runs(name, before=tmp_path, after=tmp_path)
        assert result.failure is not None and "is not inside the after folder" in result.failure
    assert compare_notebook_runs("n.ipynb", before=tmp_path, after=tmp_path, compare=["a b"]).failure == (
        "'a b' is not a variable name"
    )
    for path in ("/etc/x.ipynb", "../x.ipynb"):
        gate = run_notebook_gate(QualityGateConfig(name="nb", notebook=path), tmp_path, lambda _d: [])
        assert not gate.passed and "names a notebook inside the workspace" in gate.output
    alone = run_notebook_gate(QualityGateConfig(name="nb", notebook="n.ipynb"), tmp_path, None)
    assert not alone.passed and "needs the run's snapshots" in alone.output
