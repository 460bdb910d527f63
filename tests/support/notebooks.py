"""Real notebooks made with nbformat for the notebook tool tests: outputs, images, markdown, raw cells, and
both nbformat 4.5 (cell ids) and 4.4 (none)."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import nbformat

#: A small but real PNG payload (what the outline must never show).
PNG_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8).decode()

KERNEL = {
    "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
    "language_info": {"name": "python", "version": "3.11.7"},
}


def rich_cells() -> list[Any]:
    v4 = nbformat.v4
    plot = v4.new_code_cell(
        'import math\n\ndef area(r):\n    return math.pi * r ** 2\n\nprint("area", area(2))',
        execution_count=1,
    )
    plot.outputs = [
        v4.new_output("stream", name="stdout", text="area 12.566370614359172\n"),
        v4.new_output("display_data", data={"image/png": PNG_B64, "text/plain": "<Figure size 640x480>"}),
        v4.new_output(
            "execute_result", data={"text/plain": "42", "text/html": "<b>42</b>"}, execution_count=1
        ),
    ]
    failing = v4.new_code_cell("raise ValueError('bad input')", execution_count=2)
    failing.outputs = [
        v4.new_output(
            "error",
            ename="ValueError",
            evalue="bad input",
            traceback=["\x1b[0;31mValueError\x1b[0m: bad input", "  File <cell>, line 1"],
        )
    ]
    return [
        v4.new_markdown_cell("# Áreas — análisis\n\nCircles and *squares*."),
        plot,
        v4.new_raw_cell("raw text, left alone\n"),
        failing,
        v4.new_code_cell('side = 3\nprint("square", side * side)'),
    ]


def write_v45(path: Path) -> Path:
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(KERNEL), cells=rich_cells())
    nbformat.write(nb, path)
    return path


def write_v44(path: Path) -> Path:
    """An nbformat 4.4 notebook: same cells, no ids (4.4 does not allow them)."""
    cells = rich_cells()
    for cell in cells:
        del cell["id"]
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(KERNEL), cells=cells, nbformat_minor=4)
    nbformat.write(nb, path)
    return path


def nbformat_rewrite(before: bytes, change: Any) -> bytes:
    """What nbformat itself writes after `change(nb)` on the notebook `before`: the byte-exact expectation."""
    nb = nbformat.reads(before.decode("utf-8"), as_version=nbformat.NO_CONVERT)
    change(nb)
    return nbformat.writes(nb).encode("utf-8") + b"\n"
