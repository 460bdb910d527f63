"""The three example notebooks run end to end in a real kernel under nbclient, on the scripted model.

Each runs on a copy of `notebooks/`, with TMPDIR pointing into the test's folder so the workspaces the
notebooks create can be inspected. The checks go past "it ran": the files the agent was meant to change
changed (and nothing else did), the tests it wrote pass when run here, and each `%%architect` cell's saved
output is the run's transcript (`application/vnd.architect-nb.run+json`), not a live widget.

Notebook 01 asks for one approval, which the front end played by `run_notebook` answers by clicking Approve as
JupyterLab does; 02 and 03 run in plain headless nbclient (their runs use --mode yolo or --dry-run).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from architect_nb.testing.notebook_run import RUN_MIME, kernel_environment, run_notebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

ROOT = Path(__file__).resolve().parents[2]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def notebooks(tmp_path: Path) -> Path:
    copy = tmp_path / "notebooks"
    shutil.copytree(
        ROOT / "notebooks", copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    )
    (tmp_path / "scratch").mkdir()
    return copy


def _execute(notebooks: Path, name: str, answer: str | None) -> tuple[Any, list[str], Path]:
    scratch = notebooks.parent / "scratch"
    nb, clicks = run_notebook(notebooks / name, answer=answer, env={"TMPDIR": str(scratch)})
    return nb, clicks, scratch


def _workspace(scratch: Path, prefix: str, name: str) -> Path:
    [found] = scratch.glob(f"{prefix}*/{name}")
    return found


def _runs(nb: Any) -> list[dict[str, Any]]:
    """The run transcripts saved in the `%%architect` cells, in order; each cell's run output comes first."""
    payloads = []
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("%%architect"):
            first = cell.outputs[0]
            assert WIDGET_MIME not in first.get("data", {}), "the live view was not replaced by the run"
            payloads.append(first["data"][RUN_MIME])
    return payloads


def _events(payload: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in payload["events"] if e["kind"] == kind]


def _story(payload: dict[str, Any]) -> str:
    """A run's events, one line each, for a failure's message: what the run did, and what its gates said."""
    return "\n".join(json.dumps(event)[:1500] for event in payload["events"])


def _text(nb: Any) -> str:
    """The cells' text outputs, one after another. A stream that came in several messages (the kernel flushes
    stdout on a timer, so under load one `print` can arrive in two) is read as one, as front ends show it."""
    parts: list[str] = []
    stream = None
    for cell in nb.cells:
        for output in cell.get("outputs", ()):
            name = (cell.get("id"), output.get("name")) if output.get("output_type") == "stream" else None
            text = str(output.get("text", "") or output.get("data", {}).get("text/plain", ""))
            if name is not None and name == stream:
                parts[-1] += text
            else:
                parts.append(text)
            stream = name
    return "\n".join(parts)


def _saved_cleanly(nb: Any) -> None:
    assert "widgets" not in nb.metadata, "widget state was stored in the notebook"
    nbformat.validate(nb)


def test_01_quickstart_edits_with_one_approval_then_undoes(notebooks: Path) -> None:
    nb, clicks, scratch = _execute(notebooks, "01-quickstart.ipynb", "Approve")
    assert clicks == ["Approve"]
    [run] = _runs(nb)
    [asked] = _events(run, "confirmation_asked")
    assert asked["tool"] == "edit_file" and "+        total = 0.0" in asked["preview"]
    [answer] = _events(run, "confirmation_answered")
    assert answer["decision"] == "approve"
    results = {e["tool"]: e for e in _events(run, "tool_result")}
    assert [h["name"] for h in results["edit_file"]["hooks"]] == ["py-compile"]
    assert results["edit_file"]["hooks"][0]["passed"]
    assert "2 passed" in results["run_command"]["output"]
    [done] = _events(run, "run_finished")
    assert (done["status"], done["stop_reason"]) == ("success", "completed")
    assert done["files_changed"] == ["shop/cart.py"] and done["total_cost_usd"] > 0
    text = _text(nb)
    assert "approvals: [('edit_file', 'approve')]" in text
    assert "Undo of run" in text and "restored 1 file(s)" in text
    # The run changed the copy, and the notebook's last step undid it.
    ws = _workspace(scratch, "architect-quickstart-", "sample_project")
    assert "        total = 0\n" in (ws / "shop" / "cart.py").read_text()
    assert (notebooks / "sample_project" / "shop" / "cart.py").read_bytes() == (
        ROOT / "notebooks" / "sample_project" / "shop" / "cart.py"
    ).read_bytes()
    _saved_cleanly(nb)


def test_01_quickstart_headless_with_nobody_to_click_denies_the_edit(notebooks: Path) -> None:
    """Plain nbclient, as `jupyter execute` runs it: the unanswered approval is denied, never approved."""
    scratch = notebooks.parent / "scratch"
    nb, clicks = run_notebook(
        notebooks / "01-quickstart.ipynb",
        answer=None,
        env={"TMPDIR": str(scratch), "ARCHITECT_NOTEBOOK__APPROVAL_TIMEOUT": "2"},
    )
    assert clicks == []
    [run] = _runs(nb)
    [answer] = _events(run, "confirmation_answered")
    assert answer["decision"] == "deny" and "--mode yolo" in answer["reason"]
    [done] = _events(run, "run_finished")
    assert done["files_changed"] == []
    ws = _workspace(scratch, "architect-quickstart-", "sample_project")
    assert "        total = 0\n" in (ws / "shop" / "cart.py").read_text()
    assert "approvals: [('edit_file', 'deny')]" in _text(nb)


def test_02_refactor_extracts_cleaning_adds_passing_tests_and_keeps_the_numbers(notebooks: Path) -> None:
    nb, clicks, scratch = _execute(notebooks, "02-refactor-a-data-science-repo.ipynb", None)
    assert clicks == []
    run, tidy = _runs(nb)
    [done] = _events(run, "run_finished")
    assert (done["status"], done["stop_reason"]) == ("success", "completed"), done["message"]
    assert sorted(done["files_changed"]) == [
        "analysis.py",
        "cleaning.py",
        "explore.ipynb",
        "tests/test_cleaning.py",
    ]
    results = _events(run, "tool_result")
    # The guardrail refused the edit of the raw data; the ruff hook failed once, then passed.
    [refused] = [r for r in results if r["tool"] == "edit_file" and "sales.csv" in (r["error"] or "")]
    assert refused["status"] == "blocked" and "Guardrail" in refused["error"]
    ruff = [h for r in results for h in r["hooks"] if h["name"] == "ruff"]
    assert not ruff[0]["passed"] and "F401" in ruff[0]["output"]
    assert all(h["passed"] for h in ruff[1:]) and len(ruff) >= 3
    assert any(r["tool"] == "run_command" and "4 passed" in r["output"] for r in results)
    # The agent looked at the notebook's own cleaned rows, and the kernel check held the run until the new
    # module reproduced them exactly: it failed once (units as floats, which the tests missed), then passed.
    [looked] = [r for r in results if r["tool"] == "inspect_variable"]
    assert looked["status"] == "ok" and "pandas DataFrame, shape (" in looked["output"]
    gates = [e["message"] for e in _events(run, "warning") if e.get("category") == "quality_gate"]
    assert gates == ["Quality gate same-rows-as-the-notebook failed."]
    assert done["final_text"].startswith("Done. The cleaning code now lives once")

    ws = _workspace(scratch, "architect-refactor-", "sample_ds_repo")
    raw = "data/raw/sales.csv"
    assert (
        hashlib.sha256((ws / raw).read_bytes()).digest()
        == hashlib.sha256((ROOT / "notebooks" / "sample_ds_repo" / raw).read_bytes()).digest()
    )
    analysis = (ws / "analysis.py").read_text()
    assert "from cleaning import" in analysis and '.str.replace("$"' not in analysis
    cleaning = (ws / "cleaning.py").read_text()
    for name in ("read_raw", "normalise_regions", "parse_prices", "normalise_returned", "clean_sales"):
        assert f"def {name}(" in cleaning
    assert 'df["units"] = df["units"].fillna(1).astype(int)' in cleaning  # the kernel check's fix
    # The tests the agent wrote pass here too, and ruff is content with what it wrote.
    env = kernel_environment()
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no"],
        cwd=ws,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert tests.returncode == 0 and "4 passed" in tests.stdout, tests.stdout + tests.stderr
    lint = subprocess.run(
        [str(Path(sys.executable).parent / "ruff"), "check", "cleaning.py", "analysis.py", "tests"],
        cwd=ws,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout
    text = _text(nb)
    assert "Same numbers before and after the refactor" in text
    assert "data/raw/sales.csv is unchanged" in text
    # The repo's own notebook, with the cell the agent added, still runs against the refactored code.
    explore, _ = run_notebook(ws / "explore.ipynb", answer=None)
    assert any("load_sales" in c.source for c in explore.cells)
    assert "North" in _text(explore)
    # The notebook check: it passed after the refactor (the added cell listed, not counted); in the second
    # run its gate caught the planted behaviour change, the agent fixed it, and the check passed again.
    assert text.count("explore.ipynb: same outputs before and after.") == 2
    assert "Cells added: cell 3 (" in text
    [tidied] = _events(tidy, "run_finished")
    assert (tidied["status"], tidied["stop_reason"]) == ("success", "completed"), _story(tidy)
    gates = [e["message"] for e in _events(tidy, "warning") if e.get("category") == "quality_gate"]
    assert gates == ["Quality gate same-explore-results failed."]
    assert '"Nrth": "North"' in (ws / "cleaning.py").read_text()
    _saved_cleanly(nb)


def test_03_tool_calling_shows_each_step_refusals_dry_run_and_modes(notebooks: Path) -> None:
    nb, clicks, scratch = _execute(notebooks, "03-how-tool-calling-works.ipynb", None)
    assert clicks == []
    text = _text(nb)
    assert '"name": "edit_file"' in text and '"required": [' in text  # the schema the model receives
    for line in (
        " 5 confirm     not_needed",
        " 5 confirm     approve",
        " 5 confirm     deny (run only the cart tests)",
        " 4 pre_hooks   block (tests-are-read-only",
        " 3 guardrails  block (",
        " 6 dry_run     described",
        "They said: run only the cart tests.",
        '"role": "tool"',
        "(no tool calls: the run ends)",
    ):
        assert line in text, line
    refusals, dry, yolo = _runs(nb)
    statuses = [r["status"] for r in _events(refusals, "tool_result")]
    assert statuses == ["blocked", "blocked"]  # the hook's block, then the guardrail's refusal
    assert all(r["status"] == "dry_run" for r in _events(dry, "tool_result"))
    assert _events(dry, "run_started")[0]["dry_run"] is True
    assert _events(yolo, "run_started")[0]["mode"] == "yolo"
    assert not _events(yolo, "confirmation_asked")
    assert _events(yolo, "run_finished")[0]["files_changed"] == ["shop/cart.py"]
    ws = _workspace(scratch, "architect-teach-", "sample_project")
    assert "        total = 0\n" in (ws / "shop" / "cart.py").read_text()  # every change was undone
    for name in ("tests/test_cart.py", "pyproject.toml"):
        assert (ws / name).read_bytes() == (ROOT / "notebooks" / "sample_project" / name).read_bytes()
    _saved_cleanly(nb)


def test_04_threads_follow_up_list_and_fork(notebooks: Path) -> None:
    nb, clicks, scratch = _execute(notebooks, "04-conversations-across-cells.ipynb", None)
    assert clicks == []
    explore, follow_up, fork = _runs(nb)
    for payload in (explore, follow_up, fork):
        assert _events(payload, "run_finished")[0]["status"] == "success", payload["events"][-1]
    assert _events(explore, "run_started")[0]["thread"]["follows_run"] is None
    header = _events(follow_up, "run_started")[0]["thread"]
    assert header["name"] == "explore" and header["follows_run"] == explore["run_id"] and header["turns"] == 2
    forked = _events(fork, "run_started")[0]["thread"]
    assert forked["name"] == "pin-first"
    assert forked["forked_from"] == f"step 1 of run {explore['run_id']} (thread 'explore')"
    text = _text(nb)
    assert f"continues run {explore['run_id']}, thread `explore`" in text
    assert "* explore" in text and "pin-first" in text  # the listings, before and after the fork
    assert f"Undo of run {follow_up['run_id']}: restored 1 file(s)" in text
    ws = _workspace(scratch, "architect-threads-", "sample_project")
    assert "        total = 0\n" in (ws / "shop" / "cart.py").read_text()  # undone before the fork
    assert (ws / "tests" / "test_empty_cart.py").is_file()  # what the forked thread did instead
    _saved_cleanly(nb)


def test_05_inside_a_run_steps_inspects_edits_a_result_meters_and_forks(notebooks: Path) -> None:
    nb, clicks, scratch = _execute(notebooks, "05-inside-a-run.ipynb", None)
    assert clicks == []
    text = _text(nb)
    # 1. A pause before each model call and each tool call, and the inspector on step 2.
    assert "step 1: before the model call (2 messages)" in text
    assert 'step 3:   before edit_file({"path": "shop/cart.py"' in text
    assert "step 4: before the model call (8 messages)" in text and "success - Done" in text
    assert "Step 2: the model was sent 4 messages (2 new)" in text
    assert "new since step 1: ['assistant', 'tool']" in text
    assert 'raw arguments: {"path": "tests/test_cart.py"}' in text
    # 2. The edited result is what the next request carries, marked new.
    assert "at step 3 begins:\n# NOTE TO THE ASSISTANT" in text
    html = "".join(
        o.get("data", {}).get("text/html", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    assert "NOTE TO THE ASSISTANT" in html and "architect-nb-inspector" in html
    # 3. The meter grows with the tool results while the schemas stay what they cost.
    meters = [line for line in text.splitlines() if line.startswith("step ") and " of 128,000 tokens" in line]
    assert len(meters) == 4
    totals = [int(line.split(":")[1].split(" of ")[0].replace(",", "")) for line in meters]
    assert totals == sorted(totals) and totals[0] < totals[-1]
    assert len({line.split("tools ")[1].split(" ")[0] for line in meters}) == 1
    # 4. A refused edit, the edited call that ran, a skip, a stop.
    assert "refused edit: Invalid arguments for read_file: path" in text
    assert "step 1 read: # sample_project" in text
    assert "step 2: skipped - Skipped" in text and "aborted - Stopped while stepping, at step 3" in text
    # 6. The fork: a thread ending with the tool result of step 2, and the line that carries it on.
    assert "`%%architect --fork " in text and "ending with a tool message" in text
    ws = _workspace(scratch, "architect-inside-", "sample_project")
    assert "        total = 0\n" in (ws / "shop" / "cart.py").read_text()  # the fork stopped before the edit
    _saved_cleanly(nb)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "notebooks").glob("0*.ipynb")))
def test_committed_notebooks_are_stripped_and_end_with_how_to_use_a_real_model(name: str) -> None:
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "commit notebooks without outputs"
    assert "widgets" not in nb.metadata
    last = nb.cells[-1]
    assert last.cell_type == "markdown"
    assert "--model gpt-4o-mini" in last.source and "api_base" in last.source and "Ollama" in last.source
    assert json.dumps(nb.metadata).count("secret") == 0


def test_the_sample_data_is_what_its_seeded_generator_writes(tmp_path: Path) -> None:
    repo = ROOT / "notebooks" / "sample_ds_repo"
    shutil.copy(repo / "make_data.py", tmp_path / "make_data.py")
    subprocess.run([sys.executable, "make_data.py"], cwd=tmp_path, check=True)
    made = (tmp_path / "data" / "raw" / "sales.csv").read_bytes()
    assert made == (repo / "data" / "raw" / "sales.csv").read_bytes()
    assert made.count(b"\n") == 361  # a header and 360 orders
