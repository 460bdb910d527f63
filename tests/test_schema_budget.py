"""Tool schemas are paid for on every model turn: every field is described, and the total stays small."""

from __future__ import annotations

import sys
from pathlib import Path

from architect_nb.config import CommandsConfig, WorkspaceConfig
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_all_tools

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from schemas import REFERENCE_TOKENS, schema_tokens


def test_every_argument_has_a_description() -> None:
    registry = ToolRegistry()
    register_all_tools(registry, WorkspaceConfig(root=Path(".")), CommandsConfig())
    for schema in registry.get_schemas():
        function = schema["function"]
        assert 10 < len(function["description"]) <= 200, function["name"]
        for name, prop in function["parameters"]["properties"].items():
            assert prop.get("description"), f"{function['name']}.{name} has no description"


def test_ten_schemas_cost_well_under_the_reference() -> None:
    tokens = schema_tokens()
    assert len(tokens) == 10
    assert sum(tokens.values()) < 0.75 * REFERENCE_TOKENS, tokens
