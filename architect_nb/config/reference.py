"""The `.architect.yaml` reference, generated from the schema: every key, its type, default and description.

`docs/configuration.md` holds the output of `render_reference()` between two markers, and a test checks that
it is current: `python -m architect_nb.config.reference docs/configuration.md` rewrites it.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from architect_nb.config.schema import AppConfig

__all__ = ["BEGIN", "END", "reference_rows", "render_reference", "update_file"]

BEGIN = "<!-- BEGIN GENERATED: architect_nb.config.reference -->"
END = "<!-- END GENERATED -->"


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"mapping of {_type_name(args[0])} to {_type_name(args[1])}"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    if annotation is Path:
        return "path"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, Path):
        return f"`{value}`"
    return f"`{json.dumps(value)}`"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, directly, as list items or as mapping values."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def reference_rows(
    model: type[BaseModel] = AppConfig, prefix: str = "", seen: dict[type[BaseModel], str] | None = None
) -> list[tuple[str, str, str, str]]:
    """(key, type, default, description) for every key under `model`, depth first, in schema order.

    A model met again (each hook event's entries) is described once; later rows point to the first.
    """
    seen = {} if seen is None else seen
    rows: list[tuple[str, str, str, str]] = []
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        nested = _model_of(field.annotation)
        description = field.description or ""
        origin = typing.get_origin(field.annotation)
        suffix = "[]" if origin is list else ".<name>" if origin is dict else ""
        if nested is not None and nested in seen:
            description += f" Entries as in `{seen[nested]}`."
        rows.append((key, _type_name(field.annotation), _default(field), description.strip()))
        if nested is not None and nested not in seen:
            seen[nested] = key + suffix
            rows.extend(reference_rows(nested, key + suffix + ".", seen))
    return rows


def render_reference() -> str:
    """The Markdown table of every key, between the markers."""
    lines = [BEGIN, "", "| key | type | default | meaning |", "|---|---|---|---|"]
    for key, kind, default, description in reference_rows():
        cells = (f"`{key}`", kind, default, description)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += ["", END]
    return "\n".join(lines)


def update_file(path: Path) -> bool:
    """Rewrite the generated part of `path`; True if it changed."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    new = head + render_reference() + tail
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {'updated' if update_file(Path(arg)) else 'already current'}")
