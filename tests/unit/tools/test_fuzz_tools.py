"""Hypothesis throws hostile, huge and malformed arguments at every registered tool: none may raise."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.config import CommandsConfig, WorkspaceConfig
from architect_nb.tools.base import ToolResult
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_all_tools

HUGE = "A" * 2_000_000
HOSTILE_TEXT = [
    "",
    "..",
    "../" * 50 + "etc/passwd",
    "/etc/passwd",
    "~root/.ssh/id_rsa",
    "\x00",
    "a\x00b",
    "\ud800",
    "\u202e\u200b\ufeff",
    "\x1b[31mred\x1b[0m",
    "*" * 300,
    "(a+)+$",
    "[",
    "{",
    "-rf /",
    "$(rm -rf /)",
    "; rm -rf ~",
    HUGE,
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=200),
    st.sampled_from(HOSTILE_TEXT),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def fresh_registry(root: Path) -> ToolRegistry:
    registry = ToolRegistry()
    # Commands: 1 s timeout so nothing stalls the suite, and allowed_only so no fuzzed dangerous command runs.
    register_all_tools(
        registry,
        WorkspaceConfig(root=root, allow_delete=True),
        CommandsConfig(default_timeout=1, allowed_only=True),
    )
    return registry


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fuzz")
    root = base / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (base / "outside.txt").write_text("outside\n")
    return Path(os.path.realpath(root))


def tool_names() -> list[str]:
    reg = ToolRegistry()
    register_all_tools(reg, WorkspaceConfig(root=Path(".")))
    return reg.names()


@pytest.mark.parametrize("tool_name", tool_names())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_tools_never_raise(fuzz_root: Path, tool_name: str, data: st.DataObject) -> None:
    tool = fresh_registry(fuzz_root).get(tool_name)
    fields = list(tool.args_model.model_fields)
    keys = st.sampled_from([*fields, "unexpected", "", "__class__"])
    args: dict[str, Any] = data.draw(st.dictionaries(keys, values, max_size=len(fields) + 1))
    result = tool.execute(**args)
    assert isinstance(result, ToolResult)
    if not result.success:
        assert result.error and isinstance(result.error, str)
    assert (fuzz_root.parent / "outside.txt").read_text() == "outside\n"


@pytest.mark.parametrize("tool_name", tool_names())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_tools_never_raise_with_well_typed_hostile_values(
    fuzz_root: Path, tool_name: str, data: st.DataObject
) -> None:
    """Values of the right type get past validation, so this reaches the tools' own code."""
    tool = fresh_registry(fuzz_root).get(tool_name)
    args: dict[str, Any] = {}
    for name, info in tool.args_model.model_fields.items():
        annotation = str(info.annotation)
        if "str" in annotation:
            args[name] = data.draw(st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=50)), label=name)
        elif "bool" in annotation:
            args[name] = data.draw(st.booleans(), label=name)
        elif "int" in annotation:
            args[name] = data.draw(st.integers(min_value=-5, max_value=10**9), label=name)
    result = tool.execute(**args)
    assert isinstance(result, ToolResult)
    assert (fuzz_root.parent / "outside.txt").read_text() == "outside\n"
