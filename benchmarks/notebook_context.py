"""The notebook outline an `%%architect` run starts with: its tokens and the time to build it, for notebooks
of 10, 100 and 500 cells with images, DataFrames, printed output and an error (gpt-4o's tokenizer, bundled
with LiteLLM).

    python benchmarks/notebook_context.py

Build time is from the notebook's JSON (as the front end sends it) to the redacted text: the cells read,
every cell's names read (cold: none cached; warm: the next run of the same notebook), the stale marks, the
references and the outline within its budget. Goals: under 50 ms at 500 cells, and about 1,500 tokens at
most however many cells.
"""

from __future__ import annotations

import base64
import os
import statistics
import time
from typing import Any

from architect_nb.notebook.context import NotebookView, context_note
from architect_nb.notebook.context.names import cell_names
from architect_nb.notebook.context.view import cells_of

SIZES = (10, 100, 500)
BUDGET_TOKENS = 1500
BUILD_GOAL_MS = 50.0
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 200).decode()  # a 50 KB plot
ERROR = {
    "output_type": "error",
    "ename": "KeyError",
    "evalue": "'amont'",
    "traceback": [
        "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
        "\x1b[0;31mKeyError\x1b[0m                                  Traceback (most recent call last)",
        "File \x1b[0;32m~/.venv/lib/pandas/core/indexes/base.py:3812\x1b[0m, in "
        "\x1b[0;36mIndex.get_loc\x1b[0m\n"
        "\x1b[0;32m-> 3812\x1b[0m     return self._engine.get_loc(casted_key)\n",
        "Cell \x1b[0;32mIn[501], line 1\x1b[0m\n\x1b[0;32m----> 1\x1b[0m sales['amont'].sum()\n",
        "\x1b[0;31mKeyError\x1b[0m: 'amont'",
    ],
}


def notebook(cells: int) -> dict[str, Any]:
    """A data-science notebook of `cells` cells: headings, transforms, plots, tables, prints, one error."""
    out: list[dict[str, Any]] = []
    for i in range(cells - 2):
        if i % 10 == 0:
            out.append(
                {"cell_type": "markdown", "metadata": {}, "source": f"## Step {i // 10}\nWhat this does."}
            )
            continue
        source = (
            f"sales_{i} = sales_{i - 1}.assign(share_{i}=lambda d: d['amount'] / d['amount'].sum())\n"
            f"summary_{i} = sales_{i}.groupby('region')['share_{i}'].mean()\nsummary_{i}"
        )
        if i % 7 == 0:
            output = {
                "output_type": "display_data",
                "metadata": {},
                "data": {"image/png": PNG, "text/plain": "<Figure>"},
            }
        elif i % 5 == 0:
            output = {
                "output_type": "execute_result",
                "execution_count": i,
                "metadata": {},
                "data": {
                    "text/plain": "   region  amount\n0  north    1.0\n1  south    2.5\n\n"
                    "[1000 rows x 2 columns]",
                    "text/html": '<table class="dataframe"></table><p>1000 rows × 2 columns</p>',
                },
            }
        else:
            output = {"output_type": "stream", "name": "stdout", "text": f"step {i}: {i * 10} rows\n"}
        out.append(
            {"cell_type": "code", "metadata": {}, "execution_count": i, "outputs": [output], "source": source}
        )
    out.append({"cell_type": "code", "metadata": {}, "execution_count": cells + 1, "outputs": [ERROR],
                "source": "sales['amont'].sum()"})  # fmt: skip
    out.append({"cell_type": "code", "id": "arch", "metadata": {}, "execution_count": None, "outputs": [],
                "source": "%%architect\nfix the error above"})  # fmt: skip
    for n, cell in enumerate(out):
        cell.setdefault("id", f"c{n}")
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": out}


def build(data: dict[str, Any]) -> str:
    cells = cells_of(data)
    own = next(cell.index for cell in cells if cell.id == "arch")
    view = NotebookView(
        origin="open", cells=cells, own=own, path="analysis.ipynb", where="open in JupyterLab"
    )
    return context_note(view, "fix the error above", BUDGET_TOKENS)


def measure(cells: int, repeat: int = 7) -> tuple[int, int, float, float]:
    """(characters, tokens, cold ms, warm ms) of a `cells`-cell notebook's outline; medians of `repeat`."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from architect_nb.agent.models.litellm_import import import_litellm

    data = notebook(cells)
    cold, warm = [], []
    text = ""
    for _ in range(repeat):
        cell_names.cache_clear()
        started = time.perf_counter()
        text = build(data)
        cold.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        build(data)
        warm.append((time.perf_counter() - started) * 1000)
    tokens = int(import_litellm().token_counter(model="gpt-4o", text=text))
    return len(text), tokens, statistics.median(cold), statistics.median(warm)


def main() -> None:
    print(f"{'cells':>6} {'chars':>7} {'tokens':>7} {'cold ms':>8} {'warm ms':>8}")
    failures = []
    for cells in SIZES:
        chars, tokens, cold, warm = measure(cells)
        print(f"{cells:>6} {chars:>7} {tokens:>7} {cold:>8.1f} {warm:>8.1f}")
        if tokens > BUDGET_TOKENS * 1.05:
            failures.append(f"{cells} cells: {tokens} tokens, over about {BUDGET_TOKENS}")
        if cells == 500 and cold > BUILD_GOAL_MS:
            failures.append(f"500 cells: {cold:.1f} ms to build, over {BUILD_GOAL_MS:g} ms")
    print(f"goals: at most about {BUDGET_TOKENS} tokens; under {BUILD_GOAL_MS:g} ms at 500 cells (cold)")
    if failures:
        raise SystemExit("; ".join(failures))


if __name__ == "__main__":
    main()
