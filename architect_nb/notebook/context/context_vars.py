"""`--context df,cfg`: compact, size-capped descriptions of live kernel variables, added to the task."""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any

from architect_nb.notebook.magics import UsageError

__all__ = ["describe", "task_with_context"]

_LIMIT = 2000  # characters per variable
_MAX_KEYS = 50


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def _is_dataframe(value: Any) -> bool:
    return all(hasattr(value, attr) for attr in ("shape", "dtypes", "head", "columns"))


def describe(name: str, value: Any, limit: int = _LIMIT) -> str:
    """One variable: a DataFrame's shape, dtypes and head; a dict's keys; otherwise a short repr."""
    kind = type(value).__name__
    if _is_dataframe(value):
        try:
            dtypes = value.dtypes.to_string()
            head = value.head().to_string()
        except Exception:  # an odd frame-like object: fall back to its repr
            dtypes = head = ""
        if dtypes or head:
            body = f"shape {tuple(value.shape)}\ndtypes:\n{dtypes}\nhead:\n{head}"
            return _cap(f"{name}: {kind}, {body}", limit)
    if isinstance(value, Mapping):
        keys = [repr(k) for k in list(value)[:_MAX_KEYS]]
        more = f", ... ({len(value) - _MAX_KEYS} more)" if len(value) > _MAX_KEYS else ""
        return _cap(f"{name}: {kind} with {len(value)} key(s): {', '.join(keys)}{more}", limit)
    short = reprlib.Repr()
    short.maxstring = short.maxother = 400
    short.maxlist = short.maxtuple = short.maxset = 20
    try:
        text = short.repr(value)
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}>"
    size = f", len {len(value)}" if hasattr(value, "__len__") and not isinstance(value, str | bytes) else ""
    return _cap(f"{name}: {kind}{size} = {text}", limit)


def task_with_context(task: str, names: tuple[str, ...], namespace: Mapping[str, Any]) -> str:
    """`task` followed by a description of each named variable. Raises `UsageError` for unknown names."""
    if not names:
        return task
    missing = [n for n in names if n not in namespace]
    if missing:
        raise UsageError(
            f"%%architect --context: no variable named {missing[0]!r} in this kernel; run the cell that "
            "defines it first."
        )
    parts = [describe(n, namespace[n]) for n in names]
    return task.rstrip() + "\n\nThe notebook's variables you were given as context:\n\n" + "\n\n".join(parts)
