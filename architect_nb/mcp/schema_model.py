"""JSON Schema from an MCP server → a Pydantic args model, and the schema the model is shown.

The translation follows the design document's table (string→str, integer→int, number→float, boolean→bool,
array→list, object→dict). Required properties are required; the others are `T | None = None`. Anything the
table does not cover (a missing or unknown type, `$ref`, `allOf`, a schema that is not even a dict) becomes
`Any`: the server validates for real, so the local model checks only what it is sure of and never crashes.

Property names that are not Python identifiers, are keywords, start with `_`, or clash with a `BaseModel`
attribute (`schema`, `json`, `model_config`, `from`, `my-field`) get a safe field name and an alias, so
validation accepts the server's name and `model_dump()` gives it back.
"""

from __future__ import annotations

import copy
import keyword
import re
from collections.abc import Mapping
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = ["MCPArgsModel", "build_args_model", "clean_input_schema"]

_SIMPLE_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
}
_JSON_TYPES = frozenset({*_SIMPLE_TYPES, "null"})
_SCHEMA_KEYS = frozenset({"items", "not", "if", "then", "else", "contains", "propertyNames"})
_SCHEMA_LIST_KEYS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_MAX_DEPTH = 8
# Keys whose values are data, not sub-schemas: copied verbatim when cleaning.
_DATA_KEYS = frozenset({"default", "enum", "const", "examples", "required"})
# Keys whose values map names to sub-schemas: the names themselves are never dropped.
_NAMED_SCHEMA_KEYS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


class MCPArgsModel(BaseModel):
    """Base of every generated args model: accepts names or aliases; dumps the server's names.

    `model_dump()` leaves out the arguments that were not given (unless told otherwise), so the server gets
    exactly what the model sent and applies its own defaults instead of receiving nulls.
    """

    model_config = ConfigDict(
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        protected_namespaces=(),
        extra="allow",
    )

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("exclude_unset", True)
        kwargs.setdefault("by_alias", True)
        return super().model_dump(**kwargs)


class _ClosedMCPArgsModel(MCPArgsModel):
    """For schemas with `additionalProperties: false`: unknown arguments are refused."""

    model_config = ConfigDict(extra="forbid")


_RESERVED = frozenset(dir(MCPArgsModel))


def build_args_model(schema: Any, model_name: str = "MCPToolArgs") -> type[MCPArgsModel]:
    """A Pydantic model validating the arguments described by an MCP tool's `inputSchema`.

    Never raises on a strange schema: what cannot be translated is accepted as `Any`.
    """
    if not isinstance(schema, Mapping):
        schema = {}
    raw_properties = schema.get("properties")
    properties: dict[str, Any] = (
        {str(k): v for k, v in raw_properties.items()} if isinstance(raw_properties, Mapping) else {}
    )
    raw_required = schema.get("required")
    required = {r for r in raw_required if isinstance(r, str)} if isinstance(raw_required, list) else set()
    for name in sorted(required - properties.keys()):
        properties[name] = {}  # required but undescribed: accept anything, but insist it is there

    field_names = _field_names(list(properties))
    definitions: dict[str, Any] = {}
    for prop, field_name in field_names.items():
        prop_schema = properties[prop]
        annotation, nullable = _annotation(prop_schema, 0)
        description = prop_schema.get("description") if isinstance(prop_schema, Mapping) else None
        kwargs: dict[str, Any] = {}
        if isinstance(description, str) and description:
            kwargs["description"] = description
        if field_name != prop:
            kwargs["alias"] = prop
        if prop in required:
            if nullable:
                annotation = Union[annotation, None]  # noqa: UP007
            definitions[field_name] = (annotation, Field(..., **kwargs))
        else:
            definitions[field_name] = (Union[annotation, None], Field(None, **kwargs))  # noqa: UP007

    base = _ClosedMCPArgsModel if schema.get("additionalProperties") is False else MCPArgsModel
    return create_model(_class_name(model_name), __base__=base, **definitions)


def clean_input_schema(schema: Any) -> dict[str, Any] | None:
    """The server's `inputSchema` as the model should see it: titles and `$schema` dropped, the rest as is.

    Returns None when the schema is not an object schema a function-calling API accepts; the caller then
    falls back to the generated model's own schema.
    """
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type", "object")
    if kind != "object":
        return None
    cleaned: dict[str, Any] = _clean(copy.deepcopy(dict(schema)))
    cleaned["type"] = "object"
    if not isinstance(cleaned.get("properties"), dict):
        cleaned["properties"] = {}
    required = cleaned.get("required")
    if "required" in cleaned and not (  # `required: null` too: providers refuse anything but a list
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        del cleaned["required"]
    return cleaned


def _clean(node: Any) -> Any:
    """Drop titles and `$schema`; repair only what would make a provider refuse the whole request."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if (key == "title" and isinstance(value, str)) or key == "$schema":
                continue
            if key in _DATA_KEYS:
                out[key] = value
            elif key == "type":
                kind = _valid_type(value)
                if kind is not None:
                    out[key] = kind
            elif key in _NAMED_SCHEMA_KEYS and isinstance(value, dict):
                out[key] = {name: _clean(_as_schema(sub)) for name, sub in value.items()}
            elif key in _SCHEMA_LIST_KEYS and isinstance(value, list):
                out[key] = [_clean(_as_schema(sub)) for sub in value]
            elif key in _SCHEMA_KEYS:
                out[key] = _clean(_as_schema(value))
            else:
                out[key] = _clean(value)
        return out
    if isinstance(node, list):
        return [_clean(item) for item in node]
    return node


def _as_schema(node: Any) -> Any:
    """A sub-schema that is not an object (`true`, `42`) becomes `{}`, which accepts anything."""
    return node if isinstance(node, dict) else {}


def _valid_type(kind: Any) -> Any:
    """A `type` keyword with the names JSON Schema does not know removed; None when nothing is left."""
    if isinstance(kind, str):
        return kind if kind in _JSON_TYPES else None
    if isinstance(kind, list):
        known = [k for k in kind if isinstance(k, str) and k in _JSON_TYPES]
        return known or None
    return None


def _annotation(schema: Any, depth: int) -> tuple[Any, bool]:
    """(Python type, whether null is allowed) for one property schema; `Any` for whatever is unclear."""
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return Any, True
    kind = schema.get("type")
    if isinstance(kind, str):
        if kind == "null":
            return type(None), True
        return _SIMPLE_TYPES.get(kind, Any), False
    if isinstance(kind, list):
        names = [k for k in kind if isinstance(k, str)]
        nullable = "null" in names
        members = [n for n in names if n != "null"]
        if (
            not members
            or any(n not in _SIMPLE_TYPES for n in members)
            or len(members) != len(kind) - nullable
        ):
            return Any, True
        return _union([_SIMPLE_TYPES[n] for n in members]), nullable
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and branches:
            types: list[Any] = []
            nullable = False
            for branch in branches:
                branch_type, branch_nullable = _annotation(branch, depth + 1)
                nullable = nullable or branch_nullable
                if branch_type is Any:
                    return Any, True
                if branch_type is not type(None):
                    types.append(branch_type)
            return (_union(types) if types else Any), nullable
    return Any, True


def _union(types: list[Any]) -> Any:
    unique = list(dict.fromkeys(types))
    if len(unique) == 1:
        return unique[0]
    return Union[tuple(unique)]  # noqa: UP007 - built from a runtime list


def _field_names(props: list[str]) -> dict[str, str]:
    """Property name → Python field name; names kept as they are when safe, the rest made safe and unique."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for prop in props:
        if _is_safe(prop):
            names[prop] = prop
            taken.add(prop)
    for prop in props:
        if prop in names:
            continue
        base = re.sub(r"[^0-9A-Za-z_]", "_", prop).strip("_") or "field"
        if base[0].isdigit():
            base = f"f_{base}"
        candidate = f"{base}_"
        while candidate in taken or candidate in _RESERVED:
            candidate += "_"
        names[prop] = candidate
        taken.add(candidate)
    return {prop: names[prop] for prop in props}


def _is_safe(name: str) -> bool:
    return (
        name.isidentifier()
        and name.isascii()
        and not keyword.iskeyword(name)
        and not name.startswith("_")
        and name not in _RESERVED
    )


def _class_name(name: str) -> str:
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", name) or "MCPToolArgs"
    return cleaned if not cleaned[0].isdigit() else f"M_{cleaned}"
