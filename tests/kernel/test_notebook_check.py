"""The notebook check in real kernels: each comparison rule in both directions (a change it must catch, a
non-change it must not flag), unstable outputs, every failure path, and the quality gate that keeps the agent
working until the notebook gives the same results.

The rules share one check: one notebook whose cells each exercise a rule, run on a before and an after
folder whose `lib.py` differs, so two kernels cover them all.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from architect_nb.checks import CheckResult, compare_notebook_runs
from tests.support.agent import make_loop, write_script

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _png(changed: bool, level: int) -> str:
    from PIL import Image

    image = Image.new("RGB", (40, 40), "white")
    if changed:
        image.paste((255, 0, 0), (0, 0, 20, 20))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=level)
    return base64.b64encode(out.getvalue()).decode()


BEFORE_LIB = f"""
import numpy as np
import pandas as pd

F = 0.1 + 0.2
G = 10583.59
S = "North"
FRAME_SAME = pd.DataFrame({{"x": [0.1 + 0.2, 1.0]}}, index=["a", "b"])
FRAME_VALUE = pd.DataFrame({{"x": [1.5, 2.0]}})
FRAME_DTYPE = pd.DataFrame({{"units": [1, 2]}})
FRAME_INDEX = pd.Series([1, 2], index=["a", "b"])
ARRAY_SAME = np.array([1.0, 2.0]) * 3
ARRAY_DIFF = np.array([1, 2, 3])
IMAGE_SAME = "{_png(False, 9)}"
IMAGE_DIFF = "{_png(False, 9)}"
ERROR_SAME = KeyError("region")
ERROR_DIFF = ValueError("bad price")
WARN = False
TOTAL = 100.0
KEPT = 7
SECRET = "no secret here"
"""

AFTER_LIB = f"""
import numpy as np
import pandas as pd

F = 0.3
G = 10583.60
S = "Nrth"
FRAME_SAME = pd.DataFrame({{"x": [0.3, 1.0]}}, index=["a", "b"])
FRAME_VALUE = pd.DataFrame({{"x": [1.5, 2.5]}})
FRAME_DTYPE = pd.DataFrame({{"units": [1.0, 2.0]}})
FRAME_INDEX = pd.Series([1, 2], index=["a", "c"])
ARRAY_SAME = np.array([3.0, 6.0])
ARRAY_DIFF = np.array([1, 2, 4])
IMAGE_SAME = "{_png(False, 1)}"
IMAGE_DIFF = "{_png(True, 9)}"
ERROR_SAME = KeyError("region")
ERROR_DIFF = TypeError("bad price")
WARN = True
TOTAL = 101.0
KEPT = 7
SECRET = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ"
"""

# (cell id, source, whether the after side must be reported as changed)
CELLS: list[tuple[str, str, bool]] = [
    ("setup", "import lib\nfrom IPython.display import Image, display", False),
    ("address", "print(object())", False),
    ("timing", "%%time\nsum(range(1000))", False),
    ("tqdm", "from tqdm import tqdm\nfor _ in tqdm(range(50)):\n    pass", False),
    ("float-same", "print(lib.F)", False),
    ("float-diff", "print(lib.G)", True),
    ("text-diff", "print('region:', lib.S)", True),
    ("frame-same", "lib.FRAME_SAME", False),
    ("frame-value", "lib.FRAME_VALUE", True),
    ("frame-dtype", "lib.FRAME_DTYPE", True),
    ("series-index", "lib.FRAME_INDEX", True),
    ("array-same", "lib.ARRAY_SAME", False),
    ("array-diff", "lib.ARRAY_DIFF", True),
    ("image-same", "display(Image(data=__import__('base64').b64decode(lib.IMAGE_SAME)))", False),
    ("image-diff", "display(Image(data=__import__('base64').b64decode(lib.IMAGE_DIFF)))", True),
    ("error-same", "raise lib.ERROR_SAME", False),
    ("error-diff", "raise lib.ERROR_DIFF", True),
    ("warning", "import warnings\nif lib.WARN:\n    warnings.warn('old API', FutureWarning)\n1 + 1", False),
    ("secret", "print(lib.SECRET)", True),
]


def _notebook(folder: Path, cells: list[Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    notebook = new_notebook(
        cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    )
    path = folder / "analysis.ipynb"
    nbformat.write(notebook, path)
    return path


def _rules_sides(root: Path) -> tuple[Path, Path]:
    before, after = root / "before", root / "after"
    common = [new_code_cell(source, id=cid) for cid, source, _ in CELLS]
    clock = new_code_cell('import os\nprint("kernel", os.getpid())', id="clock")
    clock.metadata["tags"] = ["unstable"]
    _notebook(
        before, [new_markdown_cell("# rules", id="title"), *common, clock, new_code_cell("1", id="gone")]
    )
    _notebook(after, [new_markdown_cell("# rules", id="title"), *common, clock, new_code_cell("2", id="new")])
    (before / "lib.py").write_text(BEFORE_LIB)
    (after / "lib.py").write_text(AFTER_LIB)
    return before, after


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    before, after = _rules_sides(tmp_path_factory.mktemp("rules"))
    return compare_notebook_runs(
        "analysis.ipynb", before=before, after=after, compare=["lib.TOTAL", "lib.KEPT", "lib.MISSING"]
    )


def _ids(found: list[Any]) -> set[str]:
    return {d.where.split("(")[-1].rstrip(")") if "(" in d.where else d.where for d in found}


def test_every_rule_catches_its_change_and_lets_the_non_change_pass(rules: CheckResult) -> None:
    assert rules.failure is None, rules.text()
    must_catch = {cid for cid, _, changed in CELLS if changed} | {"variable lib.TOTAL"}
    assert _ids(rules.differences) == must_catch, rules.text()
    assert not rules.same


def test_the_report_says_what_differs_on_both_sides(rules: CheckResult) -> None:
    by_id = {d.where.split("(")[-1].rstrip(")"): d for d in rules.differences}
    assert "10583.59 became 10583.6" in by_id["float-diff"].what
    assert "column 'x': row 1: 2.0 became 2.5" in by_id["frame-value"].what
    assert "dtypes changed: ['int64'] became ['float64']" in by_id["frame-dtype"].what
    assert "index changed" in by_id["series-index"].what
    assert "pixels changed" in by_id["image-diff"].what
    assert (by_id["error-diff"].before, by_id["error-diff"].after) == (
        "ValueError: bad price",
        "TypeError: bad price",
    )
    text = rules.text()
    assert text.splitlines()[0].startswith("analysis.ipynb: 10 output(s) changed; the first is cell 7")
    assert "First difference: cell 7 (float-diff)" in text
    assert "<table" in rules.html() and "float-diff" in rules.html()


def test_secrets_in_outputs_are_redacted_in_the_report(rules: CheckResult) -> None:
    assert "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ" not in rules.text()
    assert "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ" not in rules.html()
    assert "secret" in _ids(rules.differences)


def test_warnings_added_and_removed_cells_and_marked_cells_are_listed_apart(rules: CheckResult) -> None:
    assert any("warning" in w and "FutureWarning: old API" in w for w in rules.warnings)
    assert rules.added == ["cell 22 (new)"] and rules.removed == ["cell 22 (gone)"]
    assert _ids(rules.unstable) == {"clock"}
    text = rules.text()
    assert "Unstable" in text and "Cells added: cell 22 (new)" in text and "Warnings (not compared)" in text


def test_a_name_the_notebook_never_defined_shows_the_same_error_on_both_sides(rules: CheckResult) -> None:
    assert "variable lib.MISSING" not in _ids(rules.differences)
    assert "variable lib.KEPT" not in _ids(rules.differences)


def test_unchanged_code_with_unstable_outputs_is_same_with_stability(tmp_path: Path) -> None:
    cells = [
        new_code_cell("import random\nprint(random.random())", id="random"),
        new_code_cell("print(sorted({3, 1, 2}))", id="stable"),
    ]
    _notebook(tmp_path / "before", cells)
    _notebook(tmp_path / "after", cells)
    result = compare_notebook_runs(
        "analysis.ipynb", before=tmp_path / "before", after=tmp_path / "after", stability=True
    )
    assert result.same, result.text()
    assert _ids(result.unstable) == {"random"} and not result.differences
    assert "Unstable" in result.text()


def test_a_cell_past_its_timeout_and_a_dying_kernel_are_reported(tmp_path: Path) -> None:
    _notebook(tmp_path / "before", [new_code_cell("import time\ntime.sleep(60)", id="slow")])
    _notebook(tmp_path / "after", [new_code_cell("import os\nos._exit(3)", id="dies")])
    result = compare_notebook_runs(
        "analysis.ipynb", before=tmp_path / "before", after=tmp_path / "after", cell_timeout=3, timeout=60
    )
    assert not result.same and result.failure is not None
    assert "before side, cell 1 (slow) ran past its timeout (3s)" in result.failure
    assert "after side, the kernel died while running cell 1 (dies)" in result.failure
    assert result.text().startswith("analysis.ipynb: the check could not finish")


def test_the_whole_notebook_past_its_timeout_is_reported(tmp_path: Path) -> None:
    cells = [new_code_cell(f"import time\ntime.sleep(2)\n{i}", id=f"c{i}") for i in range(4)]
    _notebook(tmp_path / "before", cells)
    _notebook(tmp_path / "after", cells)
    result = compare_notebook_runs(
        "analysis.ipynb", before=tmp_path / "before", after=tmp_path / "after", cell_timeout=30, timeout=3
    )
    assert result.failure is not None and "the notebook's timeout (3s)" in result.failure


def test_a_notebook_that_fails_on_the_before_side_says_so(tmp_path: Path) -> None:
    _notebook(tmp_path / "before", [new_code_cell("undefined_name", id="c1")])
    _notebook(tmp_path / "after", [new_code_cell("1", id="c1")])
    result = compare_notebook_runs("analysis.ipynb", before=tmp_path / "before", after=tmp_path / "after")
    assert not result.same
    assert result.differences[0].before == "NameError: name 'undefined_name' is not defined"
    assert "raises on the before side" in " ".join(result.notes)


def test_a_missing_kernel_spec_and_a_missing_notebook_are_reported(tmp_path: Path) -> None:
    _notebook(tmp_path / "before", [new_code_cell("1", id="c1")])
    _notebook(tmp_path / "after", [new_code_cell("1", id="c1")])
    kwargs: dict[str, Any] = {"before": tmp_path / "before", "after": tmp_path / "after"}
    result = compare_notebook_runs("analysis.ipynb", kernel_name="no-such-kernel", **kwargs)
    assert result.failure is not None and "no kernel spec named 'no-such-kernel'" in result.failure
    assert "installed: python3" in result.failure
    missing = compare_notebook_runs("other.ipynb", **kwargs)
    assert missing.failure == f"other.ipynb does not exist on the before side ({tmp_path / 'before'})"


def test_a_side_runs_without_the_grammar_jsonschema_would_build_at_import(tmp_path: Path) -> None:
    """The side process goes without rfc3987-syntax (1.5 s of CPU per side, for a format check notebooks never
    need) and still runs and validates the notebook; the import is refused only in that process."""
    import importlib.util

    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987-syntax is not installed here: nothing to leave out")
    notebook = _notebook(tmp_path, [new_code_cell("print(6 * 7)", id="c1")])
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps(
            {
                "notebook": str(notebook),
                "cwd": str(tmp_path),
                "kernel_name": None,
                "cell_timeout": 60,
                "notebook_timeout": 120,
                "compare": [],
            }
        )
    )
    probe = (
        "import sys; from architect_nb.checks import side; code = side.main(sys.argv[1:]); "
        "import jsonschema; iri = 'iri' in jsonschema.FormatChecker().checkers; "
        "print(code, sys.modules['rfc3987_syntax'], iri)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(request), str(tmp_path / "result.json")],
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
    )
    assert done.stdout.split() == ["0", "None", "False"], done.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["failure"] is None
    assert [o.get("text") for o in result["cells"][0]["outputs"]] == ["42\n"]
    # Anywhere else (a person's kernel, this process) jsonschema keeps the check.
    import jsonschema

    assert "iri" in jsonschema.FormatChecker().checkers


def test_the_command_exits_non_zero_on_a_difference(tmp_path: Path) -> None:
    _notebook(tmp_path / "before", [new_code_cell("print(1)", id="c1")])
    _notebook(tmp_path / "after", [new_code_cell("print(2)", id="c1")])
    command = [sys.executable, "-m", "architect_nb", "check", "analysis.ipynb"]
    done = subprocess.run(
        [*command, "--before", str(tmp_path / "before"), "--after", str(tmp_path / "after")],
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "First difference: cell 1 (c1): 1 became 2" in done.stdout
    usage = subprocess.run(
        [sys.executable, "-m", "architect_nb"], capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2 and "usage: python -m architect_nb check" in usage.stderr


def test_the_gate_keeps_the_agent_working_until_the_notebook_gives_the_same_results(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "prices.py").write_text("def total(xs):\n    return sum(xs)\n")
    _notebook(workspace, [new_code_cell("from prices import total\ntotal([1.5, 2.5])", id="total")])
    broken = "def total(xs):\n    return sum(xs[1:])\n"
    fixed = "def total(xs):\n    values = list(xs)\n    return sum(values)\n"
    model = write_script(
        workspace,
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "prices.py", "content": broken}}]},
            {"content": "Done."},
            {
                "expect": {"history_contains": ["Quality gate 'same-notebook' failed", "4.0 became 2.5"]},
                "tool_calls": [{"name": "write_file", "arguments": {"path": "prices.py", "content": fixed}}],
            },
            {"content": "Fixed: the total counts every price again."},
        ],
    )
    gate = {"name": "same-notebook", "notebook": "analysis.ipynb", "timeout": 120}
    loop = make_loop(workspace, model, mode="yolo", overrides={"guardrails.quality_gates": [gate]})
    result = loop.run("tidy prices.py")
    assert (result.status, result.stop_reason) == ("success", "completed"), result
    assert (workspace / "prices.py").read_text() == fixed
    assert result.final_text == "Fixed: the total counts every price again."


def test_the_magic_checks_against_a_named_run_of_this_kernel(tmp_path: Path) -> None:
    from architect_nb.config import load_config
    from architect_nb.execution.build import build_engine
    from architect_nb.notebook.magics import UsageError, parse_line
    from architect_nb.notebook.state import KernelRun, Session

    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "prices.py").write_text("RATE = 0.2\n")
    _notebook(workspace, [new_code_cell("from prices import RATE\nRATE * 100", id="rate")])
    config = load_config(overrides={"workspace.root": str(workspace)}, environ={})
    session = Session()
    for rate in ("0.25", "0.2"):  # a run that changes the rate, then one that puts it back
        engine = build_engine(config, mode="yolo")
        changed = engine.execute_tool_call("write_file", {"path": "prices.py", "content": f"RATE = {rate}\n"})
        assert changed.success, changed.error
        session.record(
            KernelRun(
                run_id=engine.run_id, task="t", status="success", stop_reason="completed",
                files_changed=["prices.py"], cost_usd=0.0, started_at=0.0, payload={}, engine=engine,
            )
        )  # fmt: skip
    first, last = session.history[0].run_id, session.history[1].run_id
    against_last = session.handle(parse_line("check analysis.ipynb"))  # 25.0 before it, 20.0 now
    assert not against_last.same and "25.0 became 20.0" in against_last.text()
    assert f"before run {last}" in against_last.text()
    against_first = session.handle(parse_line(f"check analysis.ipynb --against {first}"))
    assert against_first.same, against_first.text()
    bundle = against_first._repr_mimebundle_()
    assert "same outputs before and after" in bundle["text/plain"] and "<div" in bundle["text/html"]
    with pytest.raises(UsageError, match="is not inside the workspace"):
        session.handle(parse_line(f"check {tmp_path / 'elsewhere.ipynb'}"))
