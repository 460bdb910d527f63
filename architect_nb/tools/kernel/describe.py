"""Descriptions of live objects sized for a model: what inspect_variable and list_variables show.

Nothing here imports pandas or numpy: objects are recognised by their type's module and name, and described
through their own methods. Every description is capped; a `__repr__` that raises is reported, not raised.
"""

from __future__ import annotations

import ast
import inspect
import reprlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

from architect_nb.python_syntax import parse_expression

__all__ = ["PathError", "describe", "resolve_path", "short_size", "type_name"]

MAX_CHARS = 6000
_MAX_ITEMS = 10


class PathError(ValueError):
    """A variable path that is not a plain `name`, `name.attr` or `name[key]` chain, or that fails."""


def type_name(obj: Any) -> str:
    cls = type(obj)
    module = cls.__module__
    return (
        cls.__qualname__
        if module in ("builtins", "__main__")
        else f"{module.split('.')[0]}.{cls.__qualname__}"
    )


def _kind(obj: Any) -> str:
    cls = type(obj)
    module = cls.__module__.split(".")[0]
    if module == "pandas" and cls.__name__ in ("DataFrame", "Series"):
        return cls.__name__
    if module == "numpy" and cls.__name__ == "ndarray":
        return "ndarray"
    return ""


def short_size(obj: Any) -> str:
    """Shape, length and memory in a few words: `(360, 7), 19.7 KB`."""
    kind = _kind(obj)
    parts: list[str] = []
    try:
        if kind in ("DataFrame", "Series", "ndarray"):
            parts.append(str(tuple(obj.shape)))
            if kind == "DataFrame":
                nbytes = int(obj.memory_usage(deep=False).sum())
            else:
                nbytes = int(obj.memory_usage(deep=False) if kind == "Series" else obj.nbytes)
            parts.append(_bytes(nbytes))
        elif isinstance(obj, str | bytes | Mapping | list | tuple | set | frozenset):
            parts.append(f"len {len(obj)}")
        elif inspect.isfunction(obj) or inspect.isclass(obj):
            parts.append(_signature(obj))
        else:
            parts.append(_bytes(sys.getsizeof(obj)))
    except Exception as exc:
        parts.append(f"size unknown ({type(exc).__name__})")
    return ", ".join(p for p in parts if p)


def resolve_path(path: str, lookup: Callable[[str], Any]) -> Any:
    """The object `path` names: a variable, then `.attribute` and `[constant]` steps. Nothing is called.

    Raises `PathError` with a message for the model when the path is not of that shape or a step fails."""
    try:
        tree = parse_expression(path.strip()).body
    except SyntaxError:
        raise PathError(f"{path!r} is not a variable path; use a name, name.attr or name['key']") from None
    steps: list[tuple[str, Any]] = []
    node = tree
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute):
            steps.append(("attr", node.attr))
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            steps.append(("item", node.slice.value))
            node = node.value
        else:
            raise PathError(
                f"{path!r} is not a plain variable path: only names, .attributes and [constants] are "
                "allowed (no calls or expressions); use run_python to compute things"
            )
    try:
        obj = lookup(node.id)
    except KeyError:
        raise PathError(f"no variable {node.id!r}; list_variables shows the names") from None
    shown = node.id
    for kind, key in reversed(steps):
        try:
            obj = getattr(obj, key) if kind == "attr" else obj[key]
        except Exception as exc:
            step = f".{key}" if kind == "attr" else f"[{key!r}]"
            raise PathError(f"{shown}{step} failed: {type(exc).__name__}: {_first_line(exc)}") from None
        shown += f".{key}" if kind == "attr" else f"[{key!r}]"
    return obj


def describe(obj: Any, *, rows: int = 5, limit: int = MAX_CHARS) -> str:
    """A description of `obj` for the model, at most `limit` characters."""
    kind = _kind(obj)
    try:
        if kind == "DataFrame":
            text = _dataframe(obj, rows)
        elif kind == "Series":
            text = _series(obj, rows)
        elif kind == "ndarray":
            text = _ndarray(obj)
        elif isinstance(obj, Mapping):
            text = _mapping(obj)
        elif isinstance(obj, list | tuple | set | frozenset):
            text = _sequence(obj)
        elif inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isclass(obj):
            text = _code_object(obj)
        else:
            text = f"{type_name(obj)}: {_repr(obj, limit)}"
    except Exception as exc:  # a broken __repr__, an odd object: say so, do not raise
        text = f"{type_name(obj)}; it could not be described ({type(exc).__name__}: {_first_line(exc)})"
    return _cap(text, limit)


# ---------------------------------------------------------------------- by kind


def _dataframe(df: Any, rows: int) -> str:
    lines = [f"pandas DataFrame, shape {tuple(df.shape)}, {short_size(df).split(', ')[-1]} in memory"]
    lines.append("dtypes:\n" + _indent(df.dtypes.to_string()))
    nulls = df.isna().sum()
    nulls = nulls[nulls > 0]
    lines.append("null counts:\n" + _indent(nulls.to_string()) if len(nulls) else "null counts: none")
    lines.append(f"head({rows}):\n" + _indent(df.head(rows).to_string(max_cols=30, max_colwidth=40)))
    numeric = df.select_dtypes("number")
    if numeric.shape[1]:
        lines.append(
            "describe() of the numeric columns:\n" + _indent(numeric.describe().to_string(max_cols=30))
        )
    return "\n".join(lines)


def _series(series: Any, rows: int) -> str:
    lines = [
        f"pandas Series {series.name!r}, dtype {series.dtype}, length {len(series)}, "
        f"{int(series.isna().sum())} null(s)"
    ]
    lines.append(f"head({rows}):\n" + _indent(series.head(rows).to_string()))
    if series.dtype.kind in "iufc":
        lines.append("describe():\n" + _indent(series.describe().to_string()))
    return "\n".join(lines)


def _ndarray(array: Any) -> str:
    lines = [f"numpy ndarray, dtype {array.dtype}, shape {tuple(array.shape)}, {_bytes(int(array.nbytes))}"]
    numpy = sys.modules["numpy"]
    lines.append("sample: " + numpy.array2string(array, threshold=20, edgeitems=3, max_line_width=100))
    if array.size and array.dtype.kind in "iuf":
        lines.append(f"min {array.min()}, max {array.max()}, mean {array.mean():.6g}, std {array.std():.6g}")
    return "\n".join(lines)


def _mapping(mapping: Mapping[Any, Any]) -> str:
    lines = [f"{type_name(mapping)} with {len(mapping)} key(s)"]
    for n, (key, value) in enumerate(mapping.items()):
        if n == _MAX_ITEMS:
            lines.append(f"... and {len(mapping) - _MAX_ITEMS} more")
            break
        lines.append(f"  {_repr(key, 60)}: {type_name(value)} = {_repr(value, 120)}")
    return "\n".join(lines)


def _sequence(items: Any) -> str:
    lines = [f"{type_name(items)} of length {len(items)}"]
    for n, value in enumerate(items):
        if n == _MAX_ITEMS:
            lines.append(f"... and {len(items) - _MAX_ITEMS} more")
            break
        lines.append(f"  [{n}] {type_name(value)} = {_repr(value, 120)}")
    return "\n".join(lines)


def _code_object(obj: Any) -> str:
    kind = "class" if inspect.isclass(obj) else "function"
    lines = [f"{kind} {getattr(obj, '__qualname__', obj)}{_signature(obj)} (from {obj.__module__})"]
    doc = inspect.getdoc(obj)
    if doc:
        lines.append("docstring:\n" + _indent(doc))
    if obj.__module__ == "__main__":  # defined in the notebook: its source is in IPython's cell cache
        try:
            lines.append("source:\n" + inspect.getsource(obj).rstrip())
        except (OSError, TypeError):
            lines.append("source: not available")
    return "\n".join(lines)


# ---------------------------------------------------------------------- helpers


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 400
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = _REPR.maxset = 8


def _repr(obj: Any, limit: int) -> str:
    try:
        text = _REPR.repr(obj)
    except Exception as exc:
        return f"<repr failed: {type(exc).__name__}: {_first_line(exc)}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 60] + f"\n[... {len(text) - limit + 60} characters cut; ask for fewer rows]"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else ""
