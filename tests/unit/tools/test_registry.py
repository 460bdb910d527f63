from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from architect_nb.tools.base import BaseTool, ToolResult
from architect_nb.tools.registry import DuplicateToolError, ToolNotFoundError, ToolRegistry


class EchoArgs(BaseModel):
    text: str = Field(description="What to echo.")


def make_tool(tool_name: str, *, is_sensitive: bool = False) -> BaseTool:
    class Echo(BaseTool):
        name = tool_name
        description = f"Echo ({tool_name})."
        args_model = EchoArgs
        sensitive = is_sensitive

        def execute(self, **kwargs: Any) -> ToolResult:
            return ToolResult.ok(EchoArgs.model_validate(kwargs).text)

    return Echo()


@pytest.fixture
def reg() -> ToolRegistry:
    r = ToolRegistry()
    for name in ("zeta", "alpha", "mid"):
        r.register(make_tool(name))
    return r


def test_register_and_get(reg: ToolRegistry) -> None:
    assert reg.get("alpha").name == "alpha"
    assert reg.get("alpha").execute(text="hi").output == "hi"


def test_register_duplicate_raises_naming_the_tool(reg: ToolRegistry) -> None:
    with pytest.raises(DuplicateToolError, match="'alpha'"):
        reg.register(make_tool("alpha"))
    assert reg.count() == 3


def test_register_override_replaces(reg: ToolRegistry) -> None:
    replacement = make_tool("alpha", is_sensitive=True)
    reg.register(replacement, allow_override=True)
    assert reg.get("alpha") is replacement
    assert reg.count() == 3


def test_register_rejects_non_tools() -> None:
    with pytest.raises(TypeError):
        ToolRegistry().register(object())  # type: ignore[arg-type]


def test_get_unknown_raises_and_lists_available(reg: ToolRegistry) -> None:
    with pytest.raises(ToolNotFoundError, match=r"'nope'.*alpha, mid, zeta"):
        reg.get("nope")
    with pytest.raises(ToolNotFoundError):
        reg.get(None)  # type: ignore[arg-type]


def test_errors_are_lookup_errors_not_base_exceptions() -> None:
    assert issubclass(ToolNotFoundError, LookupError)
    assert issubclass(DuplicateToolError, LookupError)


def test_list_all_is_sorted_by_name(reg: ToolRegistry) -> None:
    assert [t.name for t in reg.list_all()] == ["alpha", "mid", "zeta"]


def test_get_schemas_all_and_allowed(reg: ToolRegistry) -> None:
    names = [s["function"]["name"] for s in reg.get_schemas()]
    assert names == ["alpha", "mid", "zeta"]
    allowed = reg.get_schemas(["zeta", "alpha"])
    assert [s["function"]["name"] for s in allowed] == ["alpha", "zeta"]


def test_get_schemas_ignores_unknown_names_silently(reg: ToolRegistry) -> None:
    assert [s["function"]["name"] for s in reg.get_schemas(["mid", "ghost", ""])] == ["mid"]
    assert reg.get_schemas([]) == []


def test_schema_is_openai_function_format(reg: ToolRegistry) -> None:
    schema = reg.get("alpha").get_schema()
    assert schema["type"] == "function"
    fn = schema["function"]
    assert fn["name"] == "alpha"
    assert fn["description"] == "Echo (alpha)."
    assert fn["parameters"]["type"] == "object"
    assert fn["parameters"]["required"] == ["text"]
    assert fn["parameters"]["properties"]["text"] == {"description": "What to echo.", "type": "string"}
    assert "title" not in str(schema)  # titles only repeat names and cost tokens


def test_schema_copies_cannot_corrupt_the_cache(reg: ToolRegistry) -> None:
    first = reg.get("alpha").get_schema()
    first["function"]["parameters"]["properties"].clear()
    assert reg.get("alpha").get_schema()["function"]["parameters"]["properties"]


def test_filter_by_names(reg: ToolRegistry) -> None:
    assert [t.name for t in reg.filter_by_names(["zeta", "ghost", "alpha"])] == ["alpha", "zeta"]
    assert reg.filter_by_names([]) == []


def test_has_tool_count_clear(reg: ToolRegistry) -> None:
    assert reg.has_tool("mid") and not reg.has_tool("ghost")
    assert "mid" in reg and len(reg) == 3
    assert reg.count() == 3
    reg.clear()
    assert reg.count() == 0
    assert reg.get_schemas() == []
    assert not reg.has_tool("mid")
