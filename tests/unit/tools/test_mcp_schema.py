"""MCP without a server: JSON Schema → args model, names, the schema the model sees, results, injection."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import types
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)
from pydantic import ValidationError

from architect_nb.mcp import (
    MCPCallError,
    MCPToolAdapter,
    build_args_model,
    clean_input_schema,
    inject_mcp_tools,
    mcp_tool_name,
)
from architect_nb.tools.base import BaseTool, ToolResult
from architect_nb.tools.registry import ToolRegistry


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], **extra}


# ---------------------------------------------------------------- schema → model


def test_type_table_required_and_optional() -> None:
    model = build_args_model(
        obj(
            {
                "s": {"type": "string"},
                "i": {"type": "integer"},
                "n": {"type": "number"},
                "b": {"type": "boolean"},
                "a": {"type": "array", "items": {"type": "string"}},
                "o": {"type": "object"},
                "opt": {"type": "integer"},
            },
            required=["s", "i", "n", "b", "a", "o"],
        )
    )
    fields = model.model_fields
    assert [f for f, info in fields.items() if info.is_required()] == ["s", "i", "n", "b", "a", "o"]
    assert fields["opt"].default is None
    good = model.model_validate({"s": "x", "i": 3, "n": 2, "b": True, "a": ["q"], "o": {"k": 1}})
    assert good.model_dump() == {"s": "x", "i": 3, "n": 2.0, "b": True, "a": ["q"], "o": {"k": 1}}
    assert isinstance(good.model_dump()["n"], float)
    with pytest.raises(ValidationError) as info:
        model.model_validate({"s": 1, "i": 1.5, "n": "many", "b": "maybe", "a": "no", "o": []})
    bad = {err["loc"][0] for err in info.value.errors()}
    assert bad == {"s", "i", "n", "b", "a", "o"}
    with pytest.raises(ValidationError, match="Field required"):
        model.model_validate({})


def test_optional_fields_not_given_are_not_dumped() -> None:
    """The engine dumps the validated model: what the model did not send must not reach the server as null."""
    model = build_args_model(obj({"path": {"type": "string"}, "limit": {"type": "integer"}}, ["path"]))
    assert model.model_validate({"path": "a"}).model_dump() == {"path": "a"}
    assert model.model_validate({"path": "a", "limit": None}).model_dump() == {"path": "a", "limit": None}


@pytest.mark.parametrize(
    "name",
    ["schema", "json", "dict", "copy", "model_config", "model_fields", "model_dump", "validate", "from",
     "class", "my-field", "with space", "_private", "__dunder__", "1st", "", "ñandú", "model_name"],
)  # fmt: skip
def test_clashing_and_invalid_names_round_trip(name: str) -> None:
    model = build_args_model(obj({name: {"type": "string"}, "plain": {"type": "integer"}}, [name]))
    field = next(
        f for f, info in model.model_fields.items() if (f if info.alias is None else info.alias) == name
    )
    assert field.isidentifier()
    validated = model.model_validate({name: "v", "plain": 1})
    assert validated.model_dump() == {name: "v", "plain": 1}
    assert validated.model_dump(mode="json", by_alias=True) == {name: "v", "plain": 1}
    # The Python field name works too (the engine may pass either).
    assert model.model_validate({field: "v"}).model_dump() == {name: "v"}
    with pytest.raises(ValidationError) as info:
        model.model_validate({"plain": 1})
    assert info.value.errors()[0]["loc"] == (name,)


def test_names_that_sanitise_alike_stay_distinct() -> None:
    model = build_args_model(
        obj({"a-b": {"type": "string"}, "a_b_": {"type": "string"}, "a b": {"type": "string"}})
    )
    assert len(set(model.model_fields)) == 3
    dumped = model.model_validate({"a-b": "1", "a_b_": "2", "a b": "3"}).model_dump()
    assert dumped == {"a-b": "1", "a_b_": "2", "a b": "3"}


def test_nullable_unions_enums_and_nesting_are_loose_but_sane() -> None:
    model = build_args_model(
        obj(
            {
                "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "either": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
                "listed": {"type": ["integer", "null"]},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "nested": {
                    "type": "object",
                    "properties": {"deep": {"type": "array", "items": {"$ref": "#/x"}}},
                },
                "ref": {"$ref": "#/$defs/Thing"},
                "all": {"allOf": [{"type": "string"}, {"minLength": 2}]},
            },
            required=["maybe", "listed"],
        )
    )
    dumped = model.model_validate(
        {
            "maybe": None,
            "listed": None,
            "either": "x",
            "mode": "other",
            "nested": {"deep": [[1]]},
            "ref": {"a": 1},
        }
    ).model_dump()
    assert dumped["maybe"] is None and dumped["listed"] is None
    assert dumped["either"] == "x" and dumped["mode"] == "other"  # enums are the server's job
    assert model.model_validate({"maybe": "s", "listed": 4, "either": 7}).model_dump()["either"] == 7
    with pytest.raises(ValidationError):
        model.model_validate({"maybe": "s", "listed": "four"})
    with pytest.raises(ValidationError):
        model.model_validate({"maybe": "s", "listed": 1, "nested": [1, 2]})


@pytest.mark.parametrize(
    "schema",
    [
        None,
        42,
        "object",
        [],
        {},
        {"type": "object"},
        {"type": "array", "items": {}},
        {"properties": [1, 2]},
        {"properties": {"x": None, "y": True, "z": 7, "w": {"type": 5}, "v": {"type": "frobnicate"}}},
        {"properties": {"x": {"type": ["string", "frob"]}, "y": {"type": []}}, "required": "x"},
        {"properties": {"x": {"anyOf": "nope"}, "y": {"oneOf": [None, 3]}}, "required": [1, None, "ghost"]},
    ],
)
def test_hostile_schemas_never_crash(schema: Any) -> None:
    model = build_args_model(schema, "hostile tool!")
    fields = model.model_fields
    model.model_json_schema()
    if isinstance(schema, dict) and schema.get("required") == [1, None, "ghost"]:
        assert fields["ghost"].is_required()
        assert model.model_validate({"ghost": object()}).model_dump()["ghost"] is not None
    else:
        model.model_validate({})


def test_a_required_null_property_takes_only_null() -> None:
    model = build_args_model({"properties": {"x": {"type": "null"}}, "required": ["x"]})
    assert model.model_validate({"x": None}).model_dump() == {"x": None}
    with pytest.raises(ValidationError):
        model.model_validate({"x": 1})


def test_additional_properties_false_refuses_unknown_arguments() -> None:
    closed = build_args_model(obj({"a": {"type": "string"}}, additionalProperties=False))
    with pytest.raises(ValidationError, match="Extra inputs"):
        closed.model_validate({"a": "x", "b": 1})
    open_ = build_args_model(obj({"a": {"type": "string"}}))
    assert open_.model_validate({"a": "x", "b": 1}).model_dump() == {"a": "x", "b": 1}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
schema_words = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "anyOf",
        "oneOf",
        "items",
        "enum",
        "title",
        "default",
        "$ref",
        "schema",
    ]
)
type_words = st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null", "frob"])
schemas = st.recursive(
    st.dictionaries(schema_words, json_values | type_words | st.lists(type_words, max_size=3), max_size=5),
    lambda inner: st.fixed_dictionaries(
        {"type": st.just("object"), "properties": st.dictionaries(st.text(max_size=10), inner, max_size=6)},
        optional={
            "required": st.lists(st.text(max_size=10), max_size=4),
            "additionalProperties": st.booleans(),
        },
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(schema=schemas, args=st.dictionaries(st.text(max_size=10), json_values, max_size=5))
def test_fuzzed_schemas_build_a_model_and_a_valid_tool_schema(
    schema: dict[str, Any], args: dict[str, Any]
) -> None:
    model = build_args_model(schema)
    with contextlib.suppress(ValidationError):
        model.model_validate(args).model_dump(mode="json")
    cleaned = clean_input_schema(schema)
    if schema.get("type", "object") != "object":
        assert cleaned is None  # not a function's arguments: the generated model's schema is used instead
        return
    assert cleaned is not None and cleaned["type"] == "object" and isinstance(cleaned["properties"], dict)
    required = cleaned.get("required", [])
    assert isinstance(required, list) and all(isinstance(name, str) for name in required)
    json.dumps(cleaned)


# ---------------------------------------------------------------- the schema the model sees


def test_clean_input_schema_keeps_the_servers_schema_minus_noise() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "statusArguments",
        "properties": {
            "title": {"type": "string", "title": "Title", "description": "A property called title stays."},
            "opts": {"type": "object", "default": {"title": "data, not a schema"}, "title": "Opts"},
            "weird": {"type": "frobnicate", "description": "unknown type dropped, description kept"},
            "junk": 42,
        },
        "required": ["title"],
        "additionalProperties": False,
    }
    cleaned = clean_input_schema(schema)
    assert cleaned == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "A property called title stays."},
            "opts": {"type": "object", "default": {"title": "data, not a schema"}},
            "weird": {"description": "unknown type dropped, description kept"},
            "junk": {},
        },
        "required": ["title"],
        "additionalProperties": False,
    }
    assert schema["title"] == "statusArguments"  # the input is not modified
    assert clean_input_schema({}) == {"type": "object", "properties": {}}
    assert clean_input_schema({"type": "array"}) is None
    assert clean_input_schema("nope") is None


# ---------------------------------------------------------------- names


def test_tool_names_are_prefixed_sanitised_and_bounded() -> None:
    assert mcp_tool_name("git", "git_status") == "mcp_git_git_status"
    assert mcp_tool_name("my server", "do.thing/now") == "mcp_my_server_do_thing_now"
    assert mcp_tool_name("ñ", "工具") == "mcp_____"
    long_a = mcp_tool_name("server", "x" * 100)
    long_b = mcp_tool_name("server", "x" * 99 + "y")
    for name in (long_a, long_b, mcp_tool_name("ñ", "工具")):
        assert len(name) <= 64
        assert all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
    assert long_a != long_b
    taken = {"mcp_a_b_c"}
    other = mcp_tool_name("a", "b.c", taken)
    assert other != "mcp_a_b_c" and other.startswith("mcp_a_b_c_")


# ---------------------------------------------------------------- the adapter, with a scripted caller


class ScriptedCaller:
    name = "fake"

    def __init__(self, result: CallToolResult | Exception) -> None:
        self.result = result
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call_tool(
        self, name: str, arguments: Mapping[str, Any], timeout: float | None = None
    ) -> CallToolResult:
        self.calls.append((name, dict(arguments)))
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def make_tool(result: CallToolResult | Exception, schema: dict[str, Any] | None = None) -> MCPToolAdapter:
    schema = schema or obj({"from": {"type": "integer"}, "n": {"type": "integer"}}, ["from"])
    definition = Tool(name="do.it", description="Does it.", input_schema=schema)
    return MCPToolAdapter.create(ScriptedCaller(result), definition)


def text_result(*texts: str, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=t) for t in texts], is_error=error)


def test_adapter_is_a_sensitive_base_tool_with_the_servers_schema() -> None:
    tool = make_tool(text_result("ok"))
    assert isinstance(tool, BaseTool)
    assert tool.name == "mcp_fake_do_it" and tool.original_name == "do.it" and tool.server_name == "fake"
    assert tool.sensitive is True and type(tool).sensitive is True
    schema = tool.get_schema()
    assert schema["function"]["name"] == "mcp_fake_do_it"
    assert schema["function"]["description"] == "Does it."
    assert schema["function"]["parameters"]["properties"] == {
        "from": {"type": "integer"},
        "n": {"type": "integer"},
    }
    schema["function"]["parameters"]["properties"].clear()
    assert tool.get_schema()["function"]["parameters"]["properties"]  # a copy each time


def test_adapter_sends_the_servers_names_and_only_what_was_given() -> None:
    tool = make_tool(text_result("line 1", "line 2"))
    caller = tool.caller
    assert isinstance(caller, ScriptedCaller)
    validated = tool.validate_args({"from": "7"}).model_dump()  # what the engine does
    result = tool.execute(**validated)
    assert result == ToolResult(
        success=True, output="line 1\nline 2", metadata={"server": "fake", "tool": "do.it"}
    )
    assert caller.calls == [("do.it", {"from": 7})]
    tool.execute(from_=1, n=None)  # by field name, with an explicit None for a non-nullable optional
    assert caller.calls[-1] == ("do.it", {"from": 1})


def test_adapter_turns_bad_arguments_into_a_failed_result() -> None:
    tool = make_tool(text_result("never"))
    result = tool.execute(n="x")
    assert not result.success
    assert "Invalid arguments for mcp_fake_do_it" in (result.error or "") and "from" in (result.error or "")
    assert isinstance(tool.caller, ScriptedCaller) and tool.caller.calls == []


def test_is_error_results_fail_with_the_servers_message() -> None:
    result = make_tool(text_result("repository not found", error=True)).execute(**{"from": 1})
    assert not result.success
    assert "repository not found" in (result.error or "")
    assert "mcp_fake_do_it" in (result.error or "")


def test_connection_errors_become_failed_results() -> None:
    result = make_tool(MCPCallError("server 'fake' did not answer within 1 s")).execute(**{"from": 1})
    assert result == ToolResult(
        success=False,
        error="server 'fake' did not answer within 1 s",
        metadata={"server": "fake", "tool": "do.it"},
    )
    crashed = make_tool(RuntimeError("bug in the transport")).execute(**{"from": 1})
    assert not crashed.success and "RuntimeError" in (crashed.error or "")


def test_non_text_content_is_described_and_structured_content_kept() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="see:"),
            ImageContent(type="image", data="aGVsbG8=", mime_type="image/png"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///a.txt", text="inside", mime_type=None),
            ),
            ResourceLink(type="resource_link", uri="file:///b.txt", name="b"),
        ],
        structured_content={"count": 2},
    )
    out = make_tool(result).execute(**{"from": 1})
    assert out.success
    assert out.output.splitlines() == [
        "see:",
        "[image content, image/png, 6 bytes]",
        "inside",
        "[resource link file:///b.txt]",
    ]
    assert out.metadata["structured_content"] == {"count": 2}
    only_structured = make_tool(CallToolResult(content=[], structured_content={"a": [1]})).execute(
        **{"from": 1}
    )
    assert only_structured.output == '{"a": [1]}'
    empty = make_tool(CallToolResult(content=[])).execute(**{"from": 1})
    assert empty.success and "no content" in empty.output


def test_each_adapter_is_its_own_class() -> None:
    a, b = make_tool(text_result("a")), make_tool(text_result("b"), obj({"x": {"type": "string"}}))
    assert type(a) is not type(b)
    assert a.args_model is not b.args_model
    assert "MCPToolAdapter" in repr(a) or "mcp_fake_do_it" in repr(a)


# ---------------------------------------------------------------- allowed_tools injection


def test_inject_adds_mcp_tools_to_explicit_lists_only() -> None:
    registry = ToolRegistry()
    for name in ("x", "y"):
        definition = Tool(name=name, input_schema={"type": "object"})
        registry.register(MCPToolAdapter.create(ScriptedCaller(text_result("")), definition))

    class LocalLookalike(BaseTool):
        name = "mcp_not_really"
        description = "A local tool whose name only looks like an MCP one."
        args_model = build_args_model({})

        def execute(self, **kwargs: Any) -> ToolResult:
            return ToolResult.ok("")

    registry.register(LocalLookalike())
    allowed = ["read_file", "mcp_fake_y"]
    assert inject_mcp_tools(allowed, registry) == ["read_file", "mcp_fake_y", "mcp_fake_x"]
    assert allowed == ["read_file", "mcp_fake_y"]  # not mutated
    assert inject_mcp_tools(None, registry) is None  # None already means every tool
    assert inject_mcp_tools([], registry) == []  # an agent with no tools stays without


# ---------------------------------------------------------------- import cost


def test_importing_architect_nb_mcp_does_not_import_the_sdk() -> None:
    code = "import sys, architect_nb.mcp; print('mcp' in sys.modules, 'httpx2' in sys.modules)"
    out = subprocess.check_output([sys.executable, "-c", code], text=True).split()
    assert out == ["False", "False"]
    assert isinstance(sys.modules["architect_nb.mcp"], types.ModuleType)


def test_registering_twice_is_quiet_but_a_foreign_name_clash_warns() -> None:
    from architect_nb.config.schema import MCPConfig
    from architect_nb.mcp import MCPManager

    manager = MCPManager(MCPConfig())
    manager.start()
    tool = MCPToolAdapter.create(ScriptedCaller(text_result("")), Tool(name="t", input_schema={}))
    manager.tools.append(tool)
    registry = ToolRegistry()
    assert manager.register_tools(registry) == []
    assert manager.register_tools(registry) == []  # the same tool again: nothing to say
    other = ToolRegistry()
    other.register(MCPToolAdapter.create(ScriptedCaller(text_result("")), Tool(name="t", input_schema={})))
    warnings = manager.register_tools(other)
    assert len(warnings) == 1 and "mcp_fake_t" in warnings[0]
    assert manager.register_tools(ToolRegistry()) == []  # the warning belonged to `other` only
    manager.close()
