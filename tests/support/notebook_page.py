"""A notebook open in a browser page, driven as the person drives it: its cells, typing, running, saving.

Pages need the app exposed (`--LabApp.expose_app_in_browser=True`, or Notebook 7's equivalent) as
`window.jupyterapp`; a notebook is found by its path among the main area's widgets.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

_PANEL = """(path) => {
    if (!window.jupyterapp) { return null; }
    for (const w of window.jupyterapp.shell.widgets('main')) {
        if (w.context && w.context.path === path) { return w; }
    }
    return null;
}"""


def _js(body: str) -> str:
    """A page function of `path` (and `arg`), with `panel` the notebook open at `path`."""
    return f"([path, arg]) => {{ const panel = ({_PANEL})(path); {body} }}"


class Notebook:
    """One open notebook: the page it is in and its path; JupyterLab has both in one page."""

    def __init__(self, page: Any, path: str) -> None:
        self.page = page
        self.path = path

    def eval(self, body: str, arg: Any = None) -> Any:
        return self.page.evaluate(_js(body), [self.path, arg])

    def wait(self, body: str, timeout: float = 90_000) -> None:
        self.page.wait_for_function(_js(body), arg=[self.path, None], timeout=timeout)

    def ready(self) -> None:
        self.wait(
            "const k = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;"
            "return !!k && k.status === 'idle' && panel.context.isReady;"
        )

    def activate(self) -> None:
        self.page.bring_to_front()
        self.eval("window.jupyterapp.shell.activateById(panel.id);")

    def cells(self) -> list[tuple[str, str]]:
        return [
            (c[0], c[1])
            for c in self.eval(
                "return panel.context.model.toJSON().cells.map("
                "c => [c.id, Array.isArray(c.source) ? c.source.join('') : c.source]);"
            )
        ]

    def source(self, cell_id: str) -> str:
        return dict(self.cells())[cell_id]

    def shown(self) -> str:
        """The text of the notebook's cell editors as rendered in its view (not their outputs)."""
        return str(
            self.eval(
                "return Array.from(panel.content.node.querySelectorAll('.jp-InputArea-editor'))"
                ".map(n => n.innerText).join('\\n');"
            )
        )

    def editor(self, index: int) -> Any:
        panel = self.eval("return panel.id;")
        return self.page.locator(f"#{panel} .jp-Cell").nth(index).locator(".cm-content")

    def type_into(self, index: int, text: str) -> None:
        """Click into the cell's editor and type at its start, as the person does."""
        self.activate()
        self.editor(index).click()
        self.page.keyboard.press("Control+Home")
        self.page.keyboard.type(text)
        self.page.keyboard.press("Escape")

    def run_from(self, index: int) -> None:
        self.activate()
        self.eval(
            "panel.content.activeCellIndex = arg; panel.content.mode = 'command';"
            "void window.jupyterapp.commands.execute('notebook:run-all-below');",
            index,
        )

    def run_cell(self, index: int) -> None:
        self.activate()
        self.eval(
            "panel.content.activeCellIndex = arg; panel.content.mode = 'command';"
            "void window.jupyterapp.commands.execute('notebook:run-cell');",
            index,
        )

    def run_new_cell(self, source: str) -> None:
        """Add a cell at the end with `source` and run it, as the person would."""
        self.activate()
        self.eval(
            "const n = panel.content.model.cells.length;"
            "panel.content.model.sharedModel.insertCell(n, {cell_type: 'code', source: arg});"
            "panel.content.activeCellIndex = n; panel.content.mode = 'command';"
            "void window.jupyterapp.commands.execute('notebook:run-cell');",
            source,
        )

    def undo_in_cell(self, cell_id: str) -> None:
        """Ctrl+Z in the cell's editor."""
        self.activate()
        self.editor([c[0] for c in self.cells()].index(cell_id)).click()
        self.page.keyboard.press("Control+z")
        self.page.keyboard.press("Escape")

    def save_without_dialog(self, artifacts: Path, name: str) -> None:
        """Save as the person does, once the kernel is idle; no 'File Changed' dialog may come up. (A cell
        still running when the save starts can make the notebook dirty again after it, so that it never reads
        saved: seen once under load.)"""
        self.activate()
        self.ready()
        self.page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.page.locator(".jp-Dialog").count():
                self.page.screenshot(path=str(artifacts / f"{name}-dialog.png"))
                pytest.fail(
                    f"saving {self.path} brought up a dialog: {self.page.locator('.jp-Dialog').inner_text()}"
                )
            if not self.eval("return panel.context.model.dirty;"):
                return
            time.sleep(0.1)
        pytest.fail(f"{self.path} was not saved within 30 s")

    def run_output(self, nth: int) -> Any:
        return self.page.locator(f"#{self.eval('return panel.id;')} .anb-RunRenderer").nth(nth)
