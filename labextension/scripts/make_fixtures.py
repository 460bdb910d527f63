"""Write real run transcripts as JSON fixtures for the labextension's unit tests.

Each fixture is the `application/vnd.architect-nb.run+json` payload of a run of the scripted model on a copy
of the sample project, so the renderer is tested on what the kernel really emits. Run with the project's venv:

    .venv/bin/python labextension/scripts/make_fixtures.py labextension/tests/fixtures
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from architect_nb.agent import create_loop
from architect_nb.config import load_config
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.testing.every_tool_session import TASK, every_tool_turns

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_PROJECT = ROOT / "notebooks" / "sample_project"

FINAL_MARKDOWN = """Totals are **floats** now and discounts round to cents.

- `Cart.total()` starts from `0.0`
- `total_with_discount()` rounds with `round(x, 2)`

<script>alert("not run")</script> [docs](javascript:alert(1))
"""

# Post-tool-use hooks that really run: one byte-compiles the edited files and passes; the other, a stand-in
# linter, prints 12 findings and fails after apply_patch, so the fixtures have a long failed hook output.
CHECK_HOOK = {
    "name": "py-compile",
    "command": "python -m compileall -q shop",
    "matcher": "edit_file|apply_patch",
}
LINT_HOOK = {
    "name": "lint",
    "command": (
        "python -c \"import sys; [print(f'shop/cart.py:{n}: W{n:03} finding {n}') for n in range(1, 13)]; "
        'sys.exit(1)"'
    ),
    "matcher": "apply_patch",
}


def _run(
    tmp: Path,
    name: str,
    turns: list[dict[str, Any]],
    task: str,
    *,
    answers: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
    dry_run: bool = False,
    max_steps: int | None = None,
) -> dict[str, Any]:
    workspace = tmp / name / "project"
    shutil.copytree(SAMPLE_PROJECT, workspace)
    script = tmp / name / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}, sort_keys=False))
    config = load_config(overrides={"workspace.root": str(workspace), **(overrides or {})}, environ={})
    confirmer = ScriptedConfirmer(answers or [], default="deny: no answer scripted")
    loop = create_loop(
        config,
        model=f"scripted/{script}",
        mode="confirm-sensitive",
        confirmer=confirmer,
        dry_run=dry_run,
        max_steps=max_steps,
    )
    result = loop.run(task)
    payload: dict[str, Any] = result.transcript.to_payload()
    return payload


def every_tool_session(tmp: Path) -> dict[str, Any]:
    turns = every_tool_turns(FINAL_MARKDOWN)
    return _run(
        tmp,
        "every_tool_session",
        turns,
        TASK,
        answers=["approve", "approve", "approve"],
        # Without the OS sandbox the fixture is the same on every machine: the test command asks, is
        # approved, and its card says "not sandboxed" (the spec renders a sandboxed one from a copy).
        overrides={"hooks.post_tool_use": [CHECK_HOOK, LINT_HOOK], "sandbox.mode": "off"},
    )


def denied_and_blocked(tmp: Path) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [
        {
            "content": "I'll rename the discount method.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "shop/cart.py",
                        "old_str": "def total_with_discount",
                        "new_str": "def discounted_total",
                    },
                }
            ],
        },
        {
            "content": "Then I'll bump the version in pyproject.toml.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "pyproject.toml", "old_str": "version", "new_str": "version"},
                }
            ],
        },
        {"content": "I stopped: the rename was denied and pyproject.toml is protected."},
    ]
    return _run(
        tmp,
        "denied_and_blocked",
        turns,
        "Rename total_with_discount to discounted_total.",
        answers=["deny: keep the public API stable"],
        overrides={"guardrails.protected_files": ["pyproject.toml"]},
    )


FLOAT_TOTAL = {
    "name": "edit_file",
    "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
}


def dry_run(tmp: Path) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [FLOAT_TOTAL]},
        {"content": "In a real run this would make the total a float."},
    ]
    return _run(tmp, "dry_run", turns, "Make the total a float (dry run).", dry_run=True)


def failure(tmp: Path) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "shop/cart.py", "old_str": "no such line", "new_str": "x"},
                }
            ]
        },
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/missing.py"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}]},
    ]
    return _run(tmp, "failure", turns, "Fix the missing module.", answers=["approve"], max_steps=3)


def long_diff(tmp: Path) -> dict[str, Any]:
    body = "".join(f"def f{i}(x: int) -> int:\n    return x + {i}  # line {i}\n\n" for i in range(1700))
    turns: list[dict[str, Any]] = [
        {
            "content": "Generating the lookup module.",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "shop/generated.py", "content": body}}
            ],
        },
        {"content": "Wrote `shop/generated.py`."},
    ]
    return _run(tmp, "long_diff", turns, "Generate 1,700 small functions.", answers=["approve"])


def _loop(tmp: Path, name: str, turns: list[dict[str, Any]], workspace: Path) -> Any:
    script = tmp / name / f"script-{len(list((tmp / name).glob('script-*')))}.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}, sort_keys=False))
    config = load_config(overrides={"workspace.root": str(workspace)}, environ={})
    return create_loop(config, model=f"scripted/{script}", mode="yolo")


def _project(tmp: Path, name: str) -> Path:
    workspace = tmp / name / "project"
    shutil.copytree(SAMPLE_PROJECT, workspace)
    return workspace


READ_CART = {"name": "read_file", "arguments": {"path": "shop/cart.py"}}


def follow_up(tmp: Path) -> dict[str, Any]:
    """The second run of a thread: its header names the run it continues and the thread's size."""
    workspace = _project(tmp, "follow_up")
    first = _loop(tmp, "follow_up", [{"tool_calls": [READ_CART]}, {"content": "It sums."}], workspace)
    thread = first.run("What does Cart.total do?").thread
    second = _loop(tmp, "follow_up", [{"content": "An int, 0."}], workspace)
    payload: dict[str, Any] = second.run("And for an empty cart?", thread=thread).transcript.to_payload()
    return payload


def fork(tmp: Path) -> dict[str, Any]:
    """A thread forked after step 1 of a run, carrying on with no new task."""
    workspace = _project(tmp, "fork")
    turns = [{"tool_calls": [READ_CART]}, {"content": "It sums."}]
    source = _loop(tmp, "fork", turns, workspace).run("What does Cart.total do?")
    assert source.thread is not None
    forked = source.thread.fork(source.run_id, 1, name="what-if")
    loop = _loop(tmp, "fork", [{"content": "From here, I would test an empty cart."}], workspace)
    payload: dict[str, Any] = loop.run("", thread=forked).transcript.to_payload()
    return payload


PLOT = """import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

totals = [sum(row) for row in rows]
plt.bar(range(len(totals)), totals)
plt.title("Totals")
print("totals:", totals)
"""


def kernel(tmp: Path) -> dict[str, Any]:
    """The kernel tools on a namespace: list the variables, run code that prints and plots, propose a cell."""
    from architect_nb.tools.kernel import PlainKernel

    workspace = _project(tmp, "kernel")
    script = tmp / "kernel" / "script.yaml"
    turns = [
        {"tool_calls": [{"name": "list_variables", "arguments": {}}]},
        {"tool_calls": [{"name": "run_python", "arguments": {"code": PLOT}}]},
        {"tool_calls": [{"name": "propose_cell", "arguments": {"code": "totals = [sum(r) for r in rows]"}}]},
        {"content": "The second row has the largest total."},
    ]
    script.write_text(yaml.safe_dump({"turns": turns}, sort_keys=False))
    config = load_config(overrides={"workspace.root": str(workspace)}, environ={})
    loop = create_loop(
        config, model=f"scripted/{script}", mode="yolo", kernel=PlainKernel({"rows": [[1, 2], [3, 4, 5]]})
    )
    payload: dict[str, Any] = loop.run("Plot the row totals.").transcript.to_payload()
    return payload


def kernel_undo(tmp: Path) -> dict[str, Any]:
    """Code run in the person's kernel that changes their variables (`kernel.write_namespace` on): step 1
    mutates a DataFrame and adds a list (variables only), step 2 writes a file (files only), step 3 adds and
    deletes names and advances a generator, which undo cannot copy. The review lists the file and /kernel."""
    import pandas as pd

    from architect_nb.tools.kernel import PlainKernel

    workspace = _project(tmp, "kernel_undo")
    script = tmp / "kernel_undo" / "script.yaml"
    turns = [
        {
            "content": "A doubled column, and a list.",
            "tool_calls": [
                {"name": "run_python", "arguments": {"code": 'df["c"] = df["a"] * 2\nitems = [1, 2, 3]'}}
            ],
        },
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "NOTES.md", "content": "c = 2a\n"}}]},
        {"tool_calls": [{"name": "run_python", "arguments": {"code": "first = next(rows)\ndel label"}}]},
        {"content": "Done: `df.c` is twice `df.a`."},
    ]
    script.write_text(yaml.safe_dump({"turns": turns}, sort_keys=False))
    overrides = {"workspace.root": str(workspace), "kernel.write_namespace": True}
    config = load_config(overrides=overrides, environ={})
    df = pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]})
    namespace = {"df": df, "alias": df, "rows": (n for n in range(3)), "label": "before"}
    loop = create_loop(config, model=f"scripted/{script}", mode="yolo", kernel=PlainKernel(namespace))
    payload: dict[str, Any] = loop.run("Add c = 2a to df.").transcript.to_payload()
    return payload


# A command that changes files in three ways: edits one in place, creates one and deletes one.
REVIEW_COMMAND = (
    "sed -i 's/percent: float/percent: float = 0.0/' shop/cart.py && "
    "printf 'Totals are floats.\\n' > CHANGES.md && rm tests/test_cart.py"
)


def review(tmp: Path) -> dict[str, Any]:
    """Files changed by an edit, a command and a new file across three steps, for the review list and the
    steps' rewinds: cart.py by step 1 and step 2 (the command), CHANGES.md added and tests/test_cart.py
    deleted by the command, shop/rounding.py added at step 3."""
    workspace = _project(tmp, "review")
    turns = [
        {
            "content": "The total starts from an `int`; I'll make it a float.",
            "tool_calls": [FLOAT_TOTAL],
        },
        {
            "content": "A default discount, a changelog, and the old test goes.",
            "tool_calls": [{"name": "run_command", "arguments": {"command": REVIEW_COMMAND}}],
        },
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "arguments": {
                        "path": "shop/rounding.py",
                        "content": "def cents(x: float) -> float:\n    return round(x, 2)\n",
                    },
                }
            ]
        },
        {"content": "Done: floats, a default discount and a rounding helper."},
    ]
    payload: dict[str, Any] = (
        _loop(tmp, "review", turns, workspace).run("Tidy the cart.").transcript.to_payload()
    )
    return payload


def thinking(tmp: Path) -> dict[str, Any]:
    """A run whose model thinks before each step (shown folded), streamed, with a secret in the thinking the
    redactor must hide."""
    workspace = _project(tmp, "thinking")
    turns = [
        {
            "thinking": "The total starts from an int. I should read cart.py before I change anything.",
            "tool_calls": [READ_CART],
        },
        {
            "thinking": "One line to change: start from 0.0.\nThe token sk-ant-api03-abcdefghijklmnopqrstuvwx is not needed.",
            "content": "I'll make the total a float.",
            "tool_calls": [FLOAT_TOTAL],
        },
        {"thinking": "Done; say so.", "content": "The total starts from `0.0` now."},
    ]
    payload: dict[str, Any] = (
        _loop(tmp, "thinking", turns, workspace).run("Make the total a float.").transcript.to_payload()
    )
    from architect_nb.notebook.output.render import RunOutput  # redacted, as the cell saves it

    return dict(RunOutput.from_payload(payload).payload)


SCENARIOS = {
    "thinking": thinking,
    "review": review,
    "kernel": kernel,
    "kernel_undo": kernel_undo,
    "follow_up": follow_up,
    "fork": fork,
    "every_tool_session": every_tool_session,
    "denied_and_blocked": denied_and_blocked,
    "dry_run": dry_run,
    "failure": failure,
    "long_diff": long_diff,
}


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, scenario in SCENARIOS.items():
            payload = scenario(Path(tmp))
            (out_dir / f"{name}.json").write_text(json.dumps(payload, indent=1) + "\n")
            kinds = [e["kind"] for e in payload["events"]]
            print(f"{name}: {len(kinds)} events, finished={payload['events'][-1].get('status')}")


if __name__ == "__main__":
    main(
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "tests" / "fixtures"
    )
