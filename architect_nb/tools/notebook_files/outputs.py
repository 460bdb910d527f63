"""A notebook cell's outputs read for a model: in brief (a stream's tail, an error's type, message and last
frames, a DataFrame's shape and head, "1 image"), an error's whole traceback, and the images as images.

Both the notebook outline of an `%%architect` run and read_notebook read outputs here, so they say the same
thing about the same output. Nothing here returns base64 as text: images leave only through `images`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from architect_nb.tools.search.scan import joined_text

__all__ = [
    "IMAGE_MIMES",
    "dataframe_shape",
    "error_frames",
    "error_text",
    "output_brief",
    "output_images",
    "outputs_brief",
    "strip_ansi",
]

IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# pandas' text/plain of a frame it truncated ends "[1000 rows x 5 columns]"; its HTML says "1000 rows × 5".
_SHAPE_TEXT = re.compile(r"\[(\d+) rows x (\d+) columns\]\s*$")
_SHAPE_HTML = re.compile(r"<p>(\d+) rows × (\d+) columns</p>")
_CURRENT_LINE = re.compile(r"^\s*-*>\s*(\d+)\s?(.*)$")  # IPython's "----> 3 df['x']" and "-> 3812 ..."
_MAX_ERROR_CHARS = 12_000


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _one_line(text: str, width: int) -> str:
    text = " ".join(strip_ansi(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def error_frames(output: dict[str, Any], last: int = 2) -> list[str]:
    """The last `last` frames of an error output's traceback, each as "where: the line it was on".

    IPython stores a traceback as a list with one entry per frame (between a header and the exception line);
    a frame reads `Cell In[3], line 1` or `File ~/x.py:12, in f(a)`, then its code with an arrow on the line.
    """
    trace = output.get("traceback")
    if not isinstance(trace, list):
        return []
    frames: list[str] = []
    for entry in trace:
        text = strip_ansi(str(entry)).strip("\n")
        lines = [line for line in text.split("\n") if line.strip()]
        if not lines or not lines[0].startswith(("Cell In[", "File ", "Input In [", '  File "')):
            continue
        where = lines[0].strip().rstrip(":")
        current = next((m for m in map(_CURRENT_LINE.match, lines[1:]) if m), None)
        code = current.group(2).strip() if current is not None else ""
        if not code and lines[0].startswith('  File "') and len(lines) > 1:
            code = lines[1].strip()  # a plain Python traceback: the code follows on the next line
        frames.append(f"{where}: {code}" if code else where)
    return frames[-last:]


def error_text(output: dict[str, Any]) -> str:
    """An error output's whole traceback as plain text (its last part, if very long)."""
    trace = output.get("traceback")
    text = (
        strip_ansi("\n".join(str(t) for t in trace))
        if isinstance(trace, list) and trace
        else f"{output.get('ename', '')}: {output.get('evalue', '')}"
    )
    if len(text) > _MAX_ERROR_CHARS:
        text = (
            f"[... {len(text) - _MAX_ERROR_CHARS} characters of the traceback cut]\n"
            + text[-_MAX_ERROR_CHARS:]
        )
    return text


def dataframe_shape(data: dict[str, Any]) -> tuple[int, int] | None:
    """(rows, columns) of a DataFrame result, from pandas' HTML or text; None if it is not one."""
    html = joined_text(data.get("text/html"))
    text = joined_text(data.get("text/plain"))
    for pattern, source in ((_SHAPE_HTML, html), (_SHAPE_TEXT, text)):
        match = pattern.search(source)
        if match:
            return int(match.group(1)), int(match.group(2))
    if 'class="dataframe"' in html:
        rows = html.count("<tr>") - html.count("<thead>") or html.count("<tr")
        columns = text.split("\n", 1)[0].split() if text else []
        return max(rows - 1, 0), len(columns)
    return None


def _result_brief(data: dict[str, Any], width: int, head_lines: int) -> str:
    shape = dataframe_shape(data)
    text = strip_ansi(joined_text(data.get("text/plain"))).rstrip()
    images = [mime for mime in IMAGE_MIMES if mime in data]
    if shape is not None:
        lines = [line.rstrip() for line in text.split("\n")[: head_lines + 1]] if head_lines else []
        head = ("\n" + "\n".join(f"    {line[:width]}" for line in lines)) if lines else ""
        return f"DataFrame {shape[0]}×{shape[1]}{head}"
    if images:
        return "1 image"
    if "text/html" in data and (not text or text.startswith("<")):
        return "HTML output"
    if not text:
        return ", ".join(sorted(str(m) for m in data)) or "empty output"
    return _one_line(text, width)


def output_brief(output: Any, *, width: int = 100, head_lines: int = 0) -> str:
    """One output in a few words: a stream's last line, an error's type and message, a DataFrame's shape (and
    its first `head_lines` rows), "1 image", or a result's text, each cut to about `width` characters."""
    if not isinstance(output, dict):
        return "malformed output"
    kind = output.get("output_type")
    if kind == "stream":
        text = strip_ansi(joined_text(output.get("text"))).rstrip()
        lines = text.split("\n") if text else []
        tail = _one_line(lines[-1], width) if lines else ""
        more = f" ({len(lines)} lines)" if len(lines) > 1 else ""
        return f"{output.get('name', 'stdout')}{more}: {tail}"
    if kind == "error":
        return _one_line(f"{output.get('ename', 'Error')}: {output.get('evalue', '')}", width)
    return _result_brief(_mapping(output.get("data")), width, head_lines)


def outputs_brief(outputs: Sequence[Any], *, width: int = 100, head_lines: int = 0) -> list[str]:
    """Each output's brief, images counted together ("2 images"), streams of one name merged."""
    briefs: list[str] = []
    images = 0
    streams: dict[str, list[str]] = {}
    for output in outputs:
        if not isinstance(output, dict):
            continue
        if output.get("output_type") == "stream":
            streams.setdefault(str(output.get("name", "stdout")), []).append(joined_text(output.get("text")))
            continue
        brief = output_brief(output, width=width, head_lines=head_lines)
        if brief == "1 image":
            images += 1
        else:
            briefs.append(brief)
    merged = [
        output_brief({"output_type": "stream", "name": name, "text": "".join(parts)}, width=width)
        for name, parts in streams.items()
    ]
    if images:
        briefs.append("1 image" if images == 1 else f"{images} images")
    return merged + briefs


def output_images(outputs: Iterable[Any], where: str) -> list[dict[str, str]]:
    """The images among `outputs` as `{mime, data, alt}` (base64 data, for a model that accepts images)."""
    images: list[dict[str, str]] = []
    for output in outputs:
        data = _mapping(output.get("data")) if isinstance(output, dict) else {}
        for mime in IMAGE_MIMES:
            value = joined_text(data.get(mime)).replace("\n", "")
            if value:
                alt = _one_line(joined_text(data.get("text/plain")) or mime, 80)
                images.append({"mime": mime, "data": value, "alt": f"{where}: {alt}"})
                break
    return images
