"""Fuzzing: `execute_tool_call` never raises, whatever the tool name, arguments, mode or answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.execution.confirmation.confirmers import ConfirmationAnswer, ConfirmationRequest
from architect_nb.tools.base import ToolResult
from tests.support.engine import make_engine

TOOLS = ["read_file", "write_file", "delete_file", "noop", "sensitive_noop", "fake_command", "fake_grep"]
KEYS = ["path", "content", "mode", "value", "command", "cwd", "offset", "limit", "extra"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
paths = st.sampled_from(
    [".env", "a.txt", "../outside/secret.txt", "/etc/passwd", "locked/x", "", "d/"]
) | st.text(max_size=20)
args_strategy = (
    st.dictionaries(st.sampled_from(KEYS), json_values | paths, max_size=4)
    | st.fixed_dictionaries({"path": paths, "content": st.text(max_size=30)})
    | st.fixed_dictionaries({"command": st.text(max_size=30)})
    | json_values
    | st.text(max_size=30)
    | st.builds(object)
)


class RandomConfirmer:
    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        request.render()
        answer = self.answers.pop(0) if self.answers else "y"
        if answer == "raise":
            raise RuntimeError("confirmer broke")
        return answer  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "ws").mkdir()
    (root / "ws" / "a.txt").write_text("hello\n")
    (root / "ws" / ".env").write_text("KEY=1\n")
    return root / "ws"


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    calls=st.lists(st.tuples(st.sampled_from(TOOLS) | st.text(max_size=12), args_strategy), max_size=4),
    mode=st.sampled_from(["yolo", "confirm-sensitive", "confirm-all"]),
    dry_run=st.booleans(),
    answers=st.lists(st.sampled_from(["y", "n", "a", "deny: no", "raise", "garbage", True, 3]), max_size=4),
)
def test_execute_tool_call_never_raises(
    fuzz_root: Path, calls: list[tuple[str, Any]], mode: str, dry_run: bool, answers: list[Any]
) -> None:
    engine, _ = make_engine(
        fuzz_root,
        mode=mode,
        dry_run=dry_run,
        guardrails={
            "protected_files": ["locked/*"],
            "sensitive_files": [".env"],
            "max_commands_executed": 2,
            "max_lines_changed": 50,
            "code_rules": [{"pattern": "eval", "message": "no eval", "severity": "block"}],
        },
        confirmer=RandomConfirmer(list(answers)),
    )
    for name, args in calls:
        result = engine.execute_tool_call(name, args)
        assert isinstance(result, ToolResult)
        if not result.success:
            assert result.error and result.error.strip()[-1] in ".)'\"", result.error
        result.to_model_text()
    engine.audit.to_transcript()
    engine.run_summary()
