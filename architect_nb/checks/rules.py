"""Whether two outputs mean the same: each rule returns None when they do, else what differs (one line).

- Texts: equal after normalisation, except that the numbers in them may differ by the relative tolerance
  (`0.30000000000000004` and `0.3` are the same number; `10583.59` and `10583.6` are not, at 1e-9).
- Values (DataFrames, Series, arrays): the same shape, columns, dtypes and index, and the same values, the
  numbers within the tolerance; NaN equals NaN.
- Images: the same size, and at most `image_threshold` of the pixels differing (by more than a little, so a
  change of antialiasing is not a change of plot).
- Errors: the same type and message.
"""

from __future__ import annotations

import base64
import io
import math
import re
from dataclasses import dataclass
from typing import Any

from architect_nb.checks.outputs import Item

__all__ = ["Tolerance", "compare_items"]

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
#: Per channel, out of 255: a pixel that moved less than this did not change.
_PIXEL_SLACK = 16


@dataclass(frozen=True, slots=True)
class Tolerance:
    rel: float = 1e-9
    abs: float = 1e-12
    image_threshold: float = 0.001  # the share of an image's pixels that may differ

    def close(self, a: float, b: float) -> bool:
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=self.rel, abs_tol=self.abs)


def compare_items(before: Item, after: Item, tol: Tolerance) -> str | None:
    if before.kind != after.kind:
        return f"the before side shows {_kind(before)}, the after side {_kind(after)}"
    if before.kind == "error":
        if tuple(before.data) != tuple(after.data):
            return "a different error"
        return None
    if before.kind == "image":
        return _images(before.data, after.data, tol)
    if before.kind == "value":
        return _values(before.data, after.data, tol)
    return _texts(before.data, after.data, tol)


def _kind(item: Item) -> str:
    return {"value": "a value", "image": "an image", "error": "an error", "text": "a text"}.get(
        item.kind, item.kind
    )


def _texts(a: str, b: str, tol: Tolerance) -> str | None:
    if a == b:
        return None
    words_a, words_b = _NUMBER.split(a), _NUMBER.split(b)
    numbers_a, numbers_b = _NUMBER.findall(a), _NUMBER.findall(b)
    if words_a != words_b or len(numbers_a) != len(numbers_b):
        return f"the text differs at line {_first_differing_line(a, b)}"
    for x, y in zip(numbers_a, numbers_b, strict=False):
        if not tol.close(float(x), float(y)):
            return f"{x} became {y}"
    return None


def _first_differing_line(a: str, b: str) -> int:
    for n, (x, y) in enumerate(zip(a.split("\n"), b.split("\n"), strict=False), start=1):
        if x != y:
            return n
    return min(a.count("\n"), b.count("\n")) + 2


def _values(a: dict[str, Any], b: dict[str, Any], tol: Tolerance) -> str | None:
    for key in ("kind", "shape", "columns", "dtypes", "dtype", "name"):
        if a.get(key) != b.get(key):
            return f"its {key} changed: {a.get(key)} became {b.get(key)}"
    if "digest" in a or "digest" in b:
        return None if a.get("digest") == b.get("digest") else "its values changed (compared by digest)"
    index_a, index_b = a.get("index") or {}, b.get("index") or {}
    for key in ("name", "dtype"):
        if index_a.get(key) != index_b.get(key):
            return f"its index {key} changed: {index_a.get(key)} became {index_b.get(key)}"
    if (where := _column(index_a.get("values", []), index_b.get("values", []), tol)) is not None:
        return f"its index changed: {where}"
    if a["kind"] == "dataframe":
        for name, x, y in zip(a["columns"], a["data"], b["data"], strict=False):
            if (where := _column(x, y, tol)) is not None:
                return f"column {name!r}: {where}"
        return None
    where = _column(a["data"], b["data"], tol)
    return None if where is None else where


def _column(x: list[Any], y: list[Any], tol: Tolerance) -> str | None:
    """Where two columns differ ("row 3: 1.5 became 2.0"), or None."""
    if len(x) != len(y):
        return f"{len(x)} values became {len(y)}"
    for row, (p, q) in enumerate(zip(x, y, strict=False)):
        if p == q:
            continue
        if _number(p) and _number(q) and tol.close(float(p), float(q)):
            continue
        if _complex_close(p, q, tol):
            continue
        return f"row {row}: {p!r} became {q!r}"
    return None


def _complex_close(p: Any, q: Any, tol: Tolerance) -> bool:
    """Complex numbers travel as [real, imaginary]."""
    if not (isinstance(p, list) and isinstance(q, list) and len(p) == len(q) and all(map(_number, p + q))):
        return False
    return all(tol.close(float(s), float(t)) for s, t in zip(p, q, strict=True))


def _number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return v in ("nan", "inf", "-inf")


def _images(a: str, b: str, tol: Tolerance) -> str | None:
    if a == b:
        return None
    try:
        from PIL import Image, ImageChops
    except ImportError:  # without pillow, images are compared by their bytes
        return "the image changed (install pillow to compare pixels)"
    try:
        first = Image.open(io.BytesIO(base64.b64decode(a))).convert("RGBA")
        second = Image.open(io.BytesIO(base64.b64decode(b))).convert("RGBA")
    except (OSError, ValueError) as exc:
        return f"an image could not be read ({exc})"
    if first.size != second.size:
        (w, h), (w2, h2) = first.size, second.size
        return f"the image's size changed: {w}×{h} became {w2}×{h2}"
    difference = ImageChops.difference(first, second)
    bands = [band.point(lambda v: 255 if v > _PIXEL_SLACK else 0) for band in difference.split()]
    moved = bands[0]
    for band in bands[1:]:
        moved = ImageChops.lighter(moved, band)
    changed = sum(moved.histogram()[1:])
    share = changed / (first.size[0] * first.size[1])
    if share > tol.image_threshold:
        return f"{share:.2%} of the image's pixels changed"
    return None
