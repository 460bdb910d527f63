"""A cell's outputs as the comparison sees them: one `Item` per thing it showed, in order.

stdout and stderr are each joined into one text (normalised, `normalise.py`), with warnings taken out of
stderr; a result or display is its value bundle when the kernel helper made one (DataFrames, Series,
arrays), else its PNG image, else its plain text (else its HTML); an error is its type and message, never its
traceback (which names files and line numbers a refactor moves).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from architect_nb.checks.kernel_helper import VALUE_MIME
from architect_nb.checks.normalise import normalise_text, split_warnings

__all__ = ["CellOutputs", "Item", "cell_outputs"]


@dataclass(frozen=True, slots=True)
class Item:
    kind: str  # "stdout", "stderr", "value", "image", "text", "error"
    data: Any

    def show(self) -> str:
        """The item as a person reads it in a report."""
        if self.kind == "error":
            return f"{self.data[0]}: {self.data[1]}"
        if self.kind == "image":
            return f"[image, {len(self.data)} base64 characters]"
        if self.kind == "value":
            return _show_value(self.data)
        return str(self.data)


@dataclass(slots=True)
class CellOutputs:
    items: list[Item] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def cell_outputs(outputs: list[dict[str, Any]]) -> CellOutputs:
    streams: dict[str, list[str]] = {"stdout": [], "stderr": []}
    order: list[Item | str] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            name = output.get("name", "stdout")
            if name not in order:
                order.append(name)
            streams.setdefault(name, []).append(_text(output.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            item = _display_item(output.get("data", {}))
            if item is not None:
                order.append(item)
        elif kind == "error":
            order.append(Item("error", (output.get("ename", ""), _first_line(output.get("evalue", "")))))
    found = CellOutputs()
    for entry in order:
        if isinstance(entry, Item):
            found.items.append(entry)
            continue
        text = "".join(streams[entry])
        if entry == "stderr":
            text, warnings = split_warnings(text)
            found.warnings += warnings
        text = normalise_text(text)
        if text:
            found.items.append(Item(entry, text))
    return found


def _display_item(data: dict[str, Any]) -> Item | None:
    if VALUE_MIME in data and isinstance(data[VALUE_MIME], dict):
        return Item("value", {**data[VALUE_MIME], "text": normalise_text(_text(data.get("text/plain", "")))})
    if "image/png" in data:
        return Item("image", _text(data["image/png"]).replace("\n", ""))
    for mime in ("text/plain", "text/markdown", "text/html", "text/latex"):
        if mime in data:
            return Item("text", normalise_text(_text(data[mime])))
    return None


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _first_line(text: str) -> str:
    return normalise_text(text)


def _show_value(value: dict[str, Any]) -> str:
    return f"{_summary(value)}\n{value.get('text', '')}".rstrip()


def _summary(value: dict[str, Any]) -> str:
    kind = value.get("kind", "value")
    shape = "×".join(str(n) for n in value.get("shape", []))
    if kind == "dataframe":
        columns = ", ".join(
            f"{c} ({t})" for c, t in zip(value.get("columns", []), value.get("dtypes", []), strict=False)
        )
        return f"DataFrame {shape}: {columns}"
    if kind == "series":
        return f"Series {value.get('name')!s} ({value.get('dtype')}), {len(value.get('data', []))} values"
    return f"array {shape} ({value.get('dtype')})"
