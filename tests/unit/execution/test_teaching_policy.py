"""The teaching policy: each level read with where it came from, the strictest holding, and a run under it:
writes refused with a sentence that names the policy and who set it, the tools offered, the hints' cut code
blocks, `off` before any model client exists."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent.code_hints import CodeBlockCutter, cut_code_blocks
from architect_nb.agent.events import AgentEvent, ModelRequest, RunStarted, TextDelta, ToolResultEvent
from architect_nb.agent.factory import create_loop
from architect_nb.config import ConfigError, load_config
from architect_nb.config.teaching_policy import (
    SYSTEM_CONFIG_ENV,
    PolicyLevel,
    TeachingOffError,
    TeachingPolicy,
    launch_environment,
    notebook_level,
    policy_for,
    system_levels,
)
from architect_nb.tools.base import CallOutcome
from tests.support.agent import copy_sample_project, write_script


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "ws")


@pytest.fixture
def system_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The administrator's file, as the spawner names it: read once per process, so the cache is cleared."""
    path = tmp_path / "etc" / "config.yaml"
    path.parent.mkdir()
    monkeypatch.setenv(SYSTEM_CONFIG_ENV, str(path))
    launch_environment.cache_clear()
    yield path
    monkeypatch.delenv(SYSTEM_CONFIG_ENV)
    launch_environment.cache_clear()


def _config(project: Path, **overrides: Any) -> Any:
    return load_config(
        overrides={"workspace.root": str(project), **overrides},
        environ={},
        search_from=project,
        overrides_label="%architect config",
    )


def _loop(project: Path, model: str, events: list[AgentEvent] | None = None) -> Any:
    """A loop under the project's own `.architect.yaml`, in yolo: only the policy refuses anything."""
    sink = events.append if events is not None else None
    return create_loop(_config(project), model=model, mode="yolo", on_event=sink)


# --------------------------------------------------------------------------- the levels


def test_without_any_policy_the_agent_is_as_always(project: Path) -> None:
    policy = policy_for(_config(project), environ={})
    assert policy.mode == "full" and policy.writes and policy.tools is None and policy.budget_usd is None
    assert policy.prompt_note() is None
    assert policy.describe() == "full (no policy set)"


def test_the_strictest_level_holds_and_no_lower_level_loosens_it(project: Path, system_file: Path) -> None:
    system_file.write_text("teaching:\n  mode: explain\n  message: Exam week.\n")
    (project / ".architect.yaml").write_text("teaching:\n  mode: full\n  budget_usd: 0.5\n")
    config = _config(project, **{"teaching.mode": "full", "teaching.budget_usd": 2})
    policy = policy_for(config).with_level(notebook_level({"architect": {"teaching": {"mode": "full"}}}))
    assert policy.mode == "explain" and policy.message == "Exam week."
    assert policy.who() == f"the system file {system_file}:1"
    assert policy.budget_usd == 0.5  # the workspace's, the smallest
    # A lower level can make it stricter, though.
    stricter = policy.with_level(
        notebook_level({"architect": {"teaching": {"mode": "hints", "code_lines": 2}}})
    )
    assert stricter.mode == "hints" and stricter.code_lines == 2
    assert stricter.who() == "the notebook's metadata (architect.teaching)"


def test_each_level_says_where_it_was_written(project: Path, system_file: Path) -> None:
    system_file.write_text("# the hub's\nteaching:\n  tools: [read_file, grep, run_command]\n")
    (project / ".architect.yaml").write_text("llm:\n  model: m\nteaching:\n  mode: hints\n")
    config = _config(project, **{"teaching.tools": ["read_file", "list_files"]})
    policy = policy_for(config)
    origins = [(level.level, level.origin) for level in policy.levels]
    assert origins == [
        ("system", f"the system file {system_file}:2"),
        ("workspace", f"the workspace's config {project / '.architect.yaml'}:3"),
        ("kernel", "%architect config (teaching.tools)"),
    ]
    assert policy.tools == frozenset({"read_file"})  # what every level that names tools allows
    assert policy.mode == "hints" and "set by the workspace's config" in policy.describe()


def test_the_spawners_environment_is_the_system_level_and_read_once(project: Path) -> None:
    env = {"ARCHITECT_TEACHING__MODE": "hints", "ARCHITECT_TEACHING__CODE_LINES": "1"}
    [level] = system_levels(env)
    assert level.level == "system" and level.setting.mode == "hints" and level.setting.code_lines == 1
    assert "ARCHITECT_TEACHING__CODE_LINES, ARCHITECT_TEACHING__MODE" in level.origin
    # The workspace's loader leaves those variables to the system level: they are not a workspace setting.
    config = load_config(overrides={"workspace.root": str(project)}, environ=env)
    assert config.teaching.mode == "full" and config.teaching_levels == ()


def test_code_run_later_in_the_kernel_cannot_change_the_launch_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    launch_environment.cache_clear()
    monkeypatch.setenv("ARCHITECT_TEACHING__MODE", "explain")
    try:
        assert launch_environment()["ARCHITECT_TEACHING__MODE"] == "explain"
        monkeypatch.setenv("ARCHITECT_TEACHING__MODE", "full")  # a student's os.environ[...] = "full"
        assert [lv.setting.mode for lv in system_levels()] == ["explain"]
    finally:
        monkeypatch.delenv("ARCHITECT_TEACHING__MODE")
        launch_environment.cache_clear()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("teaching:\n  mode: hint\n", "teaching.mode: Input should be 'full', 'explain', 'hints' or 'off'"),
        ("teaching:\n  mode: explain\n  colour: red\n", "teaching.colour: Extra inputs are not permitted"),
        ("teaching: [explain]\n", "teaching must be a mapping"),
        ("teaching:\n  mode: explain\nllm:\n  model: x\n", ":3: only teaching: is read from the system file"),
        ("teaching: {mode: [\n", "while parsing"),
        ("- a list\n", "it must hold a mapping"),
        ("teaching:\n  code_lines: -1\n", "teaching.code_lines: Input should be greater than or equal to 0"),
        ("\xff\xfe", "codec"),
    ],
)
def test_a_malformed_system_file_turns_the_agent_off_and_says_where(
    system_file: Path, text: str, problem: str
) -> None:
    system_file.write_bytes(text.encode("latin-1"))
    [level] = system_levels()
    assert level.setting.mode == "off" and problem in level.problem, level.problem
    policy = TeachingPolicy((level,))
    assert str(system_file) in policy.off_message() and "cannot be read" in policy.off_message()


def test_a_malformed_field_names_its_line_in_the_system_file(system_file: Path) -> None:
    system_file.write_text("teaching:\n  mode: explain\n  budget_usd: lots\n")
    [level] = system_levels()
    assert f"{system_file}:3: teaching.budget_usd" in level.problem


def test_a_missing_named_system_file_fails_closed(system_file: Path) -> None:
    [level] = system_levels()  # named by the spawner, but not there
    assert level.setting.mode == "off" and "No such file" in level.problem


def test_a_huge_system_file_is_not_read(system_file: Path) -> None:
    system_file.write_text("teaching:\n  message: '" + "x" * 300_000 + "'\n")
    [level] = system_levels()
    assert level.setting.mode == "off" and "over 256 KB" in level.problem


@pytest.mark.parametrize(
    ("metadata", "mode", "problem"),
    [
        ({}, None, None),
        ({"architect": {}}, None, None),
        ({"architect": {"teaching": {"mode": "explain"}}}, "explain", ""),
        ({"architect": {"teaching": {"mode": "EXPLAIN"}}}, "off", "teaching.mode"),
        ({"architect": {"teaching": "explain"}}, "off", "must be a mapping"),
        ({"architect": ["teaching"]}, "off", "not a mapping"),
        ({"architect": {"teaching": {"tools": "read_file"}}}, "off", "teaching.tools"),
        ({"architect": {"teaching": {"message": "m" * 5000}}}, "off", "teaching.message"),
        ({"architect": {"teaching": None}}, "full", ""),
        ("not metadata", None, None),
    ],
)
def test_a_notebooks_metadata_hand_edited_or_malformed_never_loosens(
    metadata: Any, mode: str | None, problem: str | None
) -> None:
    level = notebook_level(metadata)
    if mode is None:
        assert level is None
        return
    assert level is not None and level.setting.mode == mode
    assert problem is not None and problem in level.problem


def test_a_malformed_setting_in_the_session_is_refused_and_the_previous_one_stays(project: Path) -> None:
    with pytest.raises(ConfigError, match=r"%architect config teaching.mode: Input should be"):
        _config(project, **{"teaching.mode": "strict"})
    (project / ".architect.yaml").write_text("teaching:\n  mode: [explain\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        _config(project)


# --------------------------------------------------------------------------- a run under a policy


def _run(project: Path, turns: list[dict[str, Any]], events: list[AgentEvent]) -> Any:
    loop = _loop(project, write_script(project, turns), events)
    return loop, loop.run("help me")


def _results(events: list[AgentEvent]) -> list[ToolResultEvent]:
    return [e for e in events if isinstance(e, ToolResultEvent)]


WRITES = [
    ("write_file", {"path": "new.py", "content": "x = 1\n"}),
    ("edit_file", {"path": "shop/cart.py", "old_str": "def", "new_str": "def"}),
    ("delete_file", {"path": "shop/cart.py"}),
    ("apply_patch", {"patch": "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -1 +1 @@\n-a\n+b\n"}),
    ("run_command", {"command": "touch made.txt"}),
    ("run_command", {"command": 'python -c \'open("made.txt", "w")\''}),
    ("insert_notebook_cell", {"path": "n.ipynb", "index": 0, "source": "x"}),
]


@pytest.mark.parametrize("mode", ["explain", "hints"])
def test_every_write_is_refused_with_the_policy_and_who_set_it(project: Path, mode: str) -> None:
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    (project / ".architect.yaml").write_text(
        f"teaching:\n  mode: {mode}\n  message: Try it yourself first.\n"
    )
    turns = [{"tool_calls": [{"name": name, "arguments": args}]} for name, args in WRITES]
    events: list[AgentEvent] = []
    _run(project, [*turns, {"content": "done"}], events)
    results = _results(events)
    assert len(results) == len(WRITES)
    for result in results:
        assert result.status == CallOutcome.BLOCKED.value, result
        assert f"teaching policy '{mode}' (set by the workspace's config" in (result.error or "")
        assert "The teacher says: Try it yourself first." in (result.error or "")
    after = {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and p.name != ".architect.yaml"}
    assert after == before and not (project / "made.txt").exists()


def test_reading_searching_and_reading_commands_still_run(project: Path) -> None:
    (project / ".architect.yaml").write_text("teaching:\n  mode: explain\n")
    turns = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}]},
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "def"}}]},
        {"tool_calls": [{"name": "list_files", "arguments": {}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "ls"}}]},
        {"content": "explained"},
    ]
    events: list[AgentEvent] = []
    _, result = _run(project, turns, events)
    assert [r.status for r in _results(events)] == ["ok"] * 4 and result.final_text == "explained"


def test_the_model_is_offered_only_what_the_policy_allows_and_told_why(project: Path) -> None:
    (project / ".architect.yaml").write_text("teaching:\n  mode: hints\n  code_lines: 2\n")
    events: list[AgentEvent] = []
    _run(project, [{"content": "a hint"}], events)
    offered = set(next(e for e in events if isinstance(e, RunStarted)).tools)
    reading = {"read_file", "list_files", "search_code", "grep", "find_files", "read_notebook", "todo"}
    assert offered == reading | {"run_command"}
    assert not offered & {"write_file", "edit_file", "apply_patch", "delete_file"}
    system = json.dumps(next(e for e in events if isinstance(e, ModelRequest)).parts)
    assert "Teaching policy 'hints'" in system and "code examples at most 2 line(s)" in system


def test_the_tools_a_policy_names_are_the_only_ones_even_in_full_mode(project: Path) -> None:
    (project / ".architect.yaml").write_text("teaching:\n  tools: [read_file]\n")
    turns = [
        {"tool_calls": [{"name": "list_files", "arguments": {}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}]},
        {"content": "ok"},
    ]
    events: list[AgentEvent] = []
    _run(project, turns, events)
    listed, read = _results(events)
    assert listed.status == "blocked"
    said = "list_files is not among the tools the teaching policy allows (read_file; set by the workspace's"
    assert said in (listed.error or "")
    assert read.status == "ok"
    assert next(e for e in events if isinstance(e, RunStarted)).tools == ("read_file",)


def test_the_policys_budget_caps_the_run(project: Path) -> None:
    (project / ".architect.yaml").write_text("teaching:\n  budget_usd: 0.25\ncosts:\n  budget_usd: 5\n")
    loop = _loop(project, write_script(project, [{"content": "x"}]))
    assert loop.costs.budget_usd == 0.25


def test_off_refuses_before_any_model_client_is_made(project: Path, system_file: Path) -> None:
    system_file.write_text("teaching:\n  mode: off\n  message: No assistant during the exam.\n")
    with pytest.raises(TeachingOffError) as caught:
        _loop(project, "litellm/never-called")
    assert str(caught.value) == (
        f"No assistant during the exam. (teaching policy 'off', set by the system file {system_file}:1)"
    )


def test_a_notebook_level_joining_late_tightens_the_run(project: Path) -> None:
    loop = _loop(project, write_script(project, [{"content": "x"}]))
    loop.tighten(notebook_level({"architect": {"teaching": {"mode": "explain", "budget_usd": 0.1}}}))
    assert loop.engine.teaching.mode == "explain" and loop.costs.budget_usd == 0.1
    with pytest.raises(TeachingOffError, match="Closed"):
        loop.tighten(
            PolicyLevel(
                "notebook",
                "n",
                notebook_level({"architect": {"teaching": {"mode": "off", "message": "Closed."}}}).setting,
            )
        )  # type: ignore[union-attr]


def test_hints_cut_long_code_blocks_from_the_stream_and_the_answer(project: Path) -> None:
    (project / ".architect.yaml").write_text("teaching:\n  mode: hints\n  code_lines: 2\n")
    answer = "Look at line 3.\n```python\na = 1\nb = 2\nc = 3\n```\nAnd:\n```\nx = 1\n```\n"
    events: list[AgentEvent] = []
    _, result = _run(project, [{"content": answer}], events)
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    expected = (
        "Look at line 3.\n[A code block of 3 lines was cut: the course's teaching policy 'hints' shows at "
        "most 2.]\nAnd:\n```\nx = 1\n```\n"
    )
    assert result.final_text == expected
    assert streamed == expected


# --------------------------------------------------------------------------- the cutter


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no code", "no code"),
        ("```\na\nb\nc\nd\n```", "[A code block of 4 lines was cut"),
        ("~~~~\na\n~~~\nb\nc\nd\n~~~~\nafter", "[A code block of 5 lines was cut"),
        ("```py\na\nb\nc\nd", "[A code block of 4 lines was cut"),  # never closed
        ("   ```\na\n```\n", "   ```\na\n```\n"),
        ("    ```\na\nb\nc\nd\n    ```\n", "    ```\na\nb\nc\nd\n    ```\n"),  # indented: not a fence
        ("``inline`` code\n", "``inline`` code\n"),
    ],
)
def test_the_cutter(text: str, expected: str) -> None:
    assert expected in cut_code_blocks(text, 3)


def test_the_cutter_gives_the_same_text_however_the_stream_is_split() -> None:
    text = "a\n```python\n1\n2\n3\n4\n```\nb ```\n```\nc\n```\n~~~\n" + "x\n" * 10
    whole = cut_code_blocks(text, 3)
    for size in range(1, 12):
        cutter = CodeBlockCutter(3)
        shown = "".join(cutter.feed(text[i : i + size]) for i in range(0, len(text), size)) + cutter.finish()
        assert shown == whole, size
    assert whole.count("was cut") == 2


def test_the_cutter_holds_a_huge_block_without_showing_any_of_it() -> None:
    cutter = CodeBlockCutter(3)
    shown = cutter.feed("```\n" + "line\n" * 100_000)
    assert shown == "" and "100000 lines" in cutter.finish()
