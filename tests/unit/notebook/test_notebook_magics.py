"""The magics in an in-process InteractiveShell: parsing, options, errors shown plainly, the line magic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from architect_nb.notebook.context.context_vars import describe, task_with_context
from architect_nb.notebook.extension import transform_cell
from architect_nb.notebook.magics import (
    CellArgs,
    CheckArgs,
    UsageError,
    parse_cell_line,
    parse_check,
    parse_line,
)
from architect_nb.notebook.state import reset_session
from tests.support.agent import copy_sample_project, write_script

RUN_MIME = "application/vnd.architect-nb.run+json"


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[InteractiveShell, Path]]:
    ws = copy_sample_project(tmp_path / "ws")
    monkeypatch.chdir(ws)
    reset_session()
    ip = InteractiveShell.instance()
    displayed: list[Any] = []
    monkeypatch.setattr(ip.display_pub, "publish", lambda data, metadata=None, **kw: displayed.append(data))
    ip.run_line_magic("load_ext", "architect_nb")
    ip.displayed = displayed  # type: ignore[attr-defined]
    yield ip, ws
    ip.run_line_magic("unload_ext", "architect_nb")
    reset_session()


def _texts(ip: InteractiveShell) -> str:
    return "\n".join(str(d.get("text/plain", "")) for d in ip.displayed)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- parsing


def test_cell_options_parse_into_the_argument_model() -> None:
    args = parse_cell_line(
        "--agent plan --model m/x --mode yolo --dry-run --workspace /w --max-steps 3 --budget 0.5 "
        "--context df,cfg --config a.yaml"
    )
    assert args == CellArgs(
        agent="plan",
        model="m/x",
        mode="yolo",
        dry_run=True,
        workspace=Path("/w"),
        max_steps=3,
        budget_usd=0.5,
        context=("df", "cfg"),
        config=Path("a.yaml"),
    )
    assert parse_cell_line("") == CellArgs()


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("--mode sometimes", "invalid choice"),
        ("--max-steps 0", "invalid positive integer value"),
        ("--max-steps many", "invalid positive integer value"),
        ("--budget -1", "invalid amount in USD value"),
        ("--context 'a b'", "invalid comma-separated variable names"),
        ("--frobnicate", "unrecognized arguments"),
        ("--model", "expected one argument"),
        ("--help", "unrecognized arguments"),
        ("'unclosed", "No closing quotation"),
    ],
)
def test_bad_cell_options_are_one_line_usage_errors(line: str, needle: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_cell_line(line)
    message = str(info.value)
    assert needle in message and "\n" not in message and "usage: %%architect" in message


@pytest.mark.parametrize(
    "line",
    [
        "",
        "launch",
        "status now",
        "model",
        "model a b",
        "mode fast",
        "undo a b",
        "config nokey",
        "config =1",
        "check",
        "check a.ipynb --against",
        "check a.ipynb --compare 1x",
        "check a.ipynb --bogus",
        "check a.ipynb b.ipynb",
    ],
)
def test_bad_line_commands_are_one_line_usage_errors(line: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_line(line)
    assert "\n" not in str(info.value) and "usage: %architect" in str(info.value)


def test_modes_match_the_config_schema() -> None:
    from typing import get_args

    from architect_nb.config.schema import ConfirmMode
    from architect_nb.notebook.magics import MODES

    assert get_args(ConfirmMode) == MODES


def test_line_commands_parse() -> None:
    assert parse_line("undo abc").args == ("abc",)
    assert parse_line("config llm.model=x notebook.approval_timeout=3").args == (
        "llm.model=x",
        "notebook.approval_timeout=3",
    )
    assert parse_line("mode confirm-all").name == "mode"
    words = parse_line("check 'my notebook.ipynb' --against ab12 --compare df,res.total --stability").args
    assert parse_check(words) == CheckArgs(
        notebook="my notebook.ipynb", against="ab12", compare=("df", "res.total"), stability=True
    )


def test_the_transformer_rewrites_only_architect_cells() -> None:
    out = transform_cell(["%%architect --mode yolo\n", "fix 'it'\n", "now\n"])
    assert out == [
        "await __import__('architect_nb.notebook.runner', fromlist=['run_cell'])"
        ".run_cell('--mode yolo', \"fix 'it'\\nnow\\n\")\n"
    ]
    assert transform_cell(["%%architectural\n", "x\n"]) == ["%%architectural\n", "x\n"]
    assert transform_cell(["x = 1\n"]) == ["x = 1\n"]


def test_context_descriptions_are_compact() -> None:
    class Frame:  # quacks like a DataFrame
        shape = (3, 2)
        columns = ("a", "b")

        class dtypes:  # noqa: N801
            @staticmethod
            def to_string() -> str:
                return "a int64\nb object"

        def head(self) -> Any:
            class H:
                @staticmethod
                def to_string() -> str:
                    return "   a  b\n0  1  x"

            return H()

    text = describe("df", Frame())
    assert "shape (3, 2)" in text and "a int64" in text and "0  1  x" in text
    assert describe("cfg", {"lr": 0.1, "epochs": 3}) == "cfg: dict with 2 key(s): 'lr', 'epochs'"
    long = describe("xs", list(range(10_000)))
    assert len(long) < 400 and "len 10000" in long
    assert len(describe("s", "x" * 100_000)) <= 2100
    with pytest.raises(UsageError, match="no variable named 'nope'"):
        task_with_context("t", ("nope",), {})


# ---------------------------------------------------------------------- the shell


def test_load_ext_imports_no_widget_library_and_no_model_client() -> None:
    # What keeps %load_ext quick (benchmarks/notebook.py times it): the heavy imports wait for first use.
    code = (
        "import sys; from IPython.core.interactiveshell import InteractiveShell; "
        "ip = InteractiveShell.instance(); ip.run_line_magic('load_ext', 'architect_nb'); "
        "print('ipywidgets' in sys.modules, 'litellm' in sys.modules)"
    )
    out = subprocess.check_output([sys.executable, "-c", code], text=True).split()
    assert out == ["False", "False"]


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


@pytest.mark.slow  # left out of `make test-unit`: imports LiteLLM in a fresh IPython process
def test_load_ext_warms_up_the_model_client_in_the_background() -> None:
    code = (
        "import sys; from IPython.core.interactiveshell import InteractiveShell; "
        "ip = InteractiveShell.instance(); ip.run_line_magic('load_ext', 'architect_nb'); "
        "from architect_nb.notebook.warm_up import warm_up_thread; t = warm_up_thread(); "
        "print(t.daemon, 'litellm' in sys.modules); t.join(120); "
        "from architect_nb.agent.models import litellm_import; "
        "print(t.is_alive(), litellm_import._litellm is not None, "
        "'architect_nb.agent.factory' in sys.modules, 'architect_nb.notebook.output.live' in sys.modules)"
    )
    done = _python(code, ARCHITECT_WARMUP="1")
    assert done.returncode == 0, done.stderr
    # Not imported while %load_ext runs; imported by the thread, the notebook layer (the live view) too.
    assert done.stdout.split() == ["True", "False", "False", "True", "True", "True"], done.stdout
    assert "warm_up_failed" not in done.stderr


@pytest.mark.slow  # left out of `make test-unit`: fresh IPython processes
def test_the_warm_up_can_be_turned_off_and_a_kernel_that_exits_at_once_is_fine() -> None:
    code = (
        "import sys, time; from IPython.core.interactiveshell import InteractiveShell; "
        "ip = InteractiveShell.instance(); ip.run_line_magic('load_ext', 'architect_nb'); "
        "from architect_nb.notebook.warm_up import warm_up_thread; time.sleep(1); "
        "print(warm_up_thread() is None, 'litellm' in sys.modules)"
    )
    done = _python(code, ARCHITECT_WARMUP="0")
    assert done.returncode == 0 and done.stdout.split() == ["True", "False"], done.stdout + done.stderr
    # Loading the extension and leaving while the import runs (nobody ever runs a cell): a clean exit.
    for pause in ("0", "0.4", "1.5"):
        leave = (
            "import time; from IPython.core.interactiveshell import InteractiveShell; "
            f"InteractiveShell.instance().run_line_magic('load_ext', 'architect_nb'); time.sleep({pause})"
        )
        done = _python(leave)
        assert done.returncode == 0 and "Error" not in done.stderr and "Fatal" not in done.stderr, done.stderr


def test_a_cell_runs_the_agent_and_shows_the_static_bundle(shell: tuple[InteractiveShell, Path]) -> None:
    ip, ws = shell
    model = write_script(
        ws,
        [
            {
                "content": "Reading.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}],
            },
            {"content": "All read."},
        ],
    )
    ip.user_ns["cfg"] = {"lr": 0.1}
    result = ip.run_cell(f"%%architect --model {model} --mode yolo --context cfg\nRead the readme")
    assert result.success
    bundles = [d for d in ip.displayed if RUN_MIME in d]  # type: ignore[attr-defined]
    assert len(bundles) == 1
    payload = bundles[0][RUN_MIME]
    assert payload["version"] == 1 and payload["events"][0]["kind"] == "run_started"
    assert "cfg: dict with 1 key(s): 'lr'" in payload["events"][0]["task"]
    assert payload["events"][-1]["stop_reason"] == "completed"
    assert "<script" not in bundles[0]["text/html"] and "http" not in bundles[0]["text/html"]
    history = ip.run_line_magic("architect", "history")
    assert payload["run_id"] in repr(history) and "success" in repr(history)
    transcript = ip.run_line_magic("architect", "transcript")
    # The notebook keeps each model request's compact form; the transcript has it whole, its parts included.
    plain = [e for e in payload["events"] if not e["kind"].startswith("model_")]
    assert [e for e in transcript["events"] if not e["kind"].startswith("model_")] == json.loads(
        json.dumps(plain)
    )
    requests = [e for e in transcript["events"] if e["kind"] == "model_request"]
    assert len(requests) == 2 and requests[0]["parts"] and all("parts" not in e for e in payload["events"])


def test_errors_are_one_plain_message(shell: tuple[InteractiveShell, Path]) -> None:
    ip, ws = shell
    assert ip.run_cell("%%architect --mode never\nx").success
    assert ip.run_cell("%%architect --model m\n   \n").success
    assert ip.run_cell("%%architect --config missing.yaml\ndo it").success
    (ws / ".architect.yaml").write_text("llm:\n  modle: x\n")
    assert ip.run_cell("%%architect\ndo it").success
    text = _texts(ip)
    assert "invalid choice: 'never'" in text
    assert "the cell is empty" in text
    assert "missing.yaml does not exist" in text
    assert "modle" in text and "Traceback" not in text


def test_unknown_model_and_missing_key_end_the_run_with_a_clear_message(
    shell: tuple[InteractiveShell, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ip, _ws = shell
    monkeypatch.delenv("ARCHITECT_TEST_MISSING_KEY", raising=False)
    ip.run_line_magic("architect", "config llm.api_key_env=ARCHITECT_TEST_MISSING_KEY")
    assert ip.run_cell("%%architect --model openai/gpt-4o-mini\nhello").success
    plain = [d["text/plain"] for d in ip.displayed if RUN_MIME in d]  # type: ignore[attr-defined]
    assert "ARCHITECT_TEST_MISSING_KEY is not set" in plain[-1] and "llm_error" in plain[-1]


def test_line_magic_subcommands(
    shell: tuple[InteractiveShell, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ip, ws = shell
    monkeypatch.setenv("HOME", str(ws.parent / "home"))  # no skills of the machine's user
    status = repr(ip.run_line_magic("architect", "status"))
    assert "model: gpt-4o-mini" in status and f"workspace: {ws}" in status and "read_file" in status
    assert "MCP servers: none" in status
    assert "\nsandbox: " in status
    ip.run_line_magic("architect", "config sandbox.program=/nonexistent/bwrap")
    assert "sandbox: not available, so commands run without the OS sandbox" in repr(
        ip.run_line_magic("architect", "status")
    )
    ip.run_line_magic("architect", "config sandbox.program=bwrap")
    assert "edit_file:" in repr(ip.run_line_magic("architect", "tools"))
    ip.run_line_magic("architect", "model scripted/x.yaml")
    ip.run_line_magic("architect", "mode confirm-all")
    status = repr(ip.run_line_magic("architect", "status"))
    assert "model: scripted/x.yaml" in status and "mode: confirm-all" in status
    assert "approval_timeout: 300" in repr(ip.run_line_magic("architect", "config"))
    ip.run_line_magic("architect", "config notebook.approval_timeout=7")
    assert "approval timeout: 7 s" in repr(ip.run_line_magic("architect", "status"))
    bad = repr(ip.run_line_magic("architect", "config notebook.approval_timeout=-1"))
    assert "approval_timeout" in bad and "greater than 0" in bad and "Traceback" not in bad
    assert "approval timeout: 7 s" in repr(ip.run_line_magic("architect", "status"))
    assert "no run in this kernel" in repr(ip.run_line_magic("architect", "undo"))
    assert "unknown subcommand" in repr(ip.run_line_magic("architect", "frob"))
    assert "No skills: put one in .claude/skills/NAME/SKILL.md" in repr(
        ip.run_line_magic("architect", "skills")
    )
    skill = ws / ".claude" / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release.\n---\nBody.\n")
    (ws / ".claude" / "skills" / "bare").mkdir()
    (ws / ".claude" / "skills" / "bare" / "SKILL.md").write_text("No front matter.\n")
    listed = repr(ip.run_line_magic("architect", "skills"))
    assert "release (.claude/skills/release): Cut a release." in listed and "Body." not in listed
    assert "Skill .claude/skills/bare left out: SKILL.md has no front matter" in listed
    assert "build starts a run" in repr(ip.run_line_magic("architect", "build"))  # not awaited here


def _float_totals(ip: InteractiveShell, ws: Path) -> None:
    """A yolo run on the scripted model that changes `shop/cart.py` (total = 0 → 0.0)."""
    edit = {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"}
    model = write_script(
        ws, [{"tool_calls": [{"name": "edit_file", "arguments": edit}]}, {"content": "Done."}]
    )
    assert ip.run_cell(f"%%architect --model {model} --mode yolo\nFloat totals").success


def test_undo_restores_the_files_a_run_changed(shell: tuple[InteractiveShell, Path]) -> None:
    ip, ws = shell
    cart = ws / "shop" / "cart.py"
    before = cart.read_text()
    _float_totals(ip, ws)
    assert cart.read_text() != before
    assert "restored 1 file(s)" in repr(ip.run_line_magic("architect", "undo"))
    assert cart.read_text() == before
    assert "(undone)" in repr(ip.run_line_magic("architect", "history"))
    again = ip.run_line_magic("architect", "undo")
    assert "already undone" in repr(again) and again.level == "error"
    assert cart.read_text() == before


def test_undo_needs_the_whole_run_id(shell: tuple[InteractiveShell, Path]) -> None:
    """A prefix (say, from a hostile notebook's Undo button) must not reach one of your runs."""
    ip, ws = shell
    cart = ws / "shop" / "cart.py"
    _float_totals(ip, ws)
    from architect_nb.notebook.state import get_session

    run_id = get_session().history[-1].run_id
    refused = ip.run_line_magic("architect", f"undo {run_id[:4]}")
    assert refused.level == "error" and "give the whole id" in repr(refused)
    assert "total = 0.0" in cart.read_text()
    assert "restored 1 file(s)" in repr(ip.run_line_magic("architect", f"undo {run_id}"))


def test_an_undo_with_problems_is_reported_as_an_error(shell: tuple[InteractiveShell, Path]) -> None:
    """The Undo button reads the level: a partial undo must not show as a plain success."""
    ip, ws = shell
    (ws / "sub").mkdir()
    (ws / "sub" / "a.txt").write_text("before\n")
    model = write_script(
        ws,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "sub/a.txt", "content": "after\n"}}
                ]
            },
            {"content": "Done."},
        ],
    )
    assert ip.run_cell(f"%%architect --model {model} --mode yolo\nEdit a").success
    outside = ws.parent / "elsewhere"
    outside.mkdir()
    (ws / "sub" / "a.txt").unlink()
    (ws / "sub").rmdir()
    (ws / "sub").symlink_to(outside, target_is_directory=True)
    report = ip.run_line_magic("architect", "undo")
    assert report.level == "error" and "changed since the run: sub/a.txt" in repr(report)
    assert not (outside / "a.txt").exists()


# ---------------------------------------------------------------------- review, revert and rewind as typed

# Three steps: a file whose name needs quoting; a command that edits cart.py and makes files whose names need
# base64 (a newline) and HTML escaping; an edit of cart.py again.
_ODD_FILES = "printf x > \"$(printf 'two\\nlines.txt')\" && printf y > '<b>.txt'"
_REVIEW_TURNS: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "it's notes.txt", "content": "n\n"}}]},
    {
        "tool_calls": [
            {
                "name": "run_command",
                "arguments": {"command": f"sed -i 's/total = 0$/total = 0.0/' shop/cart.py && {_ODD_FILES}"},
            }
        ]
    },
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "shop/cart.py", "old_str": "(1 - percent", "new_str": "(1.0 - percent"},
            }
        ]
    },
    {"content": "Done."},
]


def _typed_lines(plain: str, start: str) -> list[str]:
    return [line.split(": ", 1)[1] for line in plain.splitlines() if line.lstrip().startswith(start)]


def test_the_output_lists_the_review_and_its_typed_lines_work(shell: tuple[InteractiveShell, Path]) -> None:
    """What the plain and HTML outputs tell a person to type (no buttons there) reverts and rewinds."""
    ip, ws = shell
    cart = ws / "shop" / "cart.py"
    original = cart.read_bytes()
    model = write_script(ws, _REVIEW_TURNS)
    assert ip.run_cell(f"%%architect --model {model} --mode yolo\nTidy").success
    bundle = next(d for d in ip.displayed if RUN_MIME in d)  # type: ignore[attr-defined]
    run_id = bundle[RUN_MIME]["run_id"]
    finished = bundle[RUN_MIME]["events"][-1]
    assert {c["path"]: c["status"] for c in finished["changes"]} == {
        "it's notes.txt": "added",
        "shop/cart.py": "modified",
        "two\nlines.txt": "added",
        "<b>.txt": "added",
    }
    html, plain = bundle["text/html"], bundle["text/plain"]
    assert "<b>.txt" not in html and "&lt;b&gt;.txt" in html
    assert "Review: 4 file(s) changed" in html and f"%architect undo {run_id}</code>" in html
    assert html.count("Rewind to before step ") == 3
    typed = ["'it'\"'\"'s notes.txt'", "b64:dHdvCmxpbmVzLnR4dA", "'<b>.txt'"]
    reverts = [f"%architect revert {run_id} {path}" for path in typed]
    assert sorted(_typed_lines(plain, "added")) == sorted(reverts)
    shown = html.replace("&#x27;", "'").replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    assert all(f"<code>{line}</code>" in shown for line in reverts)
    assert "two\\x0alines.txt" in plain  # the name is shown with its newline escaped, on one line
    rewinds = _typed_lines(plain, "Rewind to before step")
    assert rewinds == [f"%architect undo {run_id}:{step}" for step in (1, 2, 3)]

    # Revert the file whose name has a newline, as the line says; only it goes.
    report = ip.run_line_magic("architect", f"revert {run_id} b64:dHdvCmxpbmVzLnR4dA")
    assert report.level == "info" and "removed 1 created file(s)" in repr(report)
    assert not (ws / "two\nlines.txt").exists() and (ws / "<b>.txt").exists()
    again = ip.run_line_magic("architect", f"revert {run_id} b64:dHdvCmxpbmVzLnR4dA")
    assert again.level == "error" and "already reverted" in repr(again)
    # The quoted one, as typed.
    assert ip.run_line_magic("architect", f"revert {run_id} 'it'\"'\"'s notes.txt'").level == "info"
    assert not (ws / "it's notes.txt").exists()

    # Rewind to before step 2: the command's and step 3's changes go; the rest of the run is long gone.
    rewound = ip.run_line_magic("architect", rewinds[1].removeprefix("%architect "))
    assert rewound.level == "info", repr(rewound)
    assert cart.read_bytes() == original and not (ws / "<b>.txt").exists()
    refused = ip.run_line_magic("architect", rewinds[2].removeprefix("%architect "))
    assert refused.level == "error" and "already rewound" in repr(refused)
    listed = repr(ip.run_line_magic("architect", f"review {run_id}"))
    assert "shop/cart.py (modified)" in listed and f"%architect revert {run_id} PATH" in listed


def test_a_new_kernel_finds_a_run_a_dead_kernel_cut_off(shell: tuple[InteractiveShell, Path]) -> None:
    """history, threads and a bare undo in a kernel with no run of its own name the cut-off run; undo
    with its id puts its files back."""
    from tests.support.engine import make_engine

    ip, ws = shell
    cart = ws / "shop" / "cart.py"
    before = cart.read_text()
    engine, _ = make_engine(ws)
    run = engine.start_run(task="Float the totals")
    floated = {"path": "shop/cart.py", "content": before.replace("total = 0\n", "total = 0.0\n")}
    assert engine.execute_tool_call("write_file", floated).success  # and then the kernel died: no end_run()
    history = repr(ip.run_line_magic("architect", "history"))
    assert "No runs in this kernel yet." in history and run in history and "Float the totals" in history
    assert "cut off (its kernel stopped)" in history
    assert run in repr(ip.run_line_magic("architect", "threads"))
    offer = ip.run_line_magic("architect", "undo")
    assert offer.level == "info" and f"%architect undo {run}" in repr(offer) and "shop/cart.py" in repr(offer)
    assert "total = 0.0" in cart.read_text()  # offered, not done
    assert "restored 1 file(s)" in repr(ip.run_line_magic("architect", f"undo {run}"))
    assert cart.read_text() == before
    assert "undone" in repr(ip.run_line_magic("architect", "history"))
