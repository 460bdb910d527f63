"""What the browser tests share: a Jupyter server on a temporary folder, Debian's chromium, and waits.

`jupyter_server` starts `jupyter lab` or `jupyter notebook` (Notebook 7) with no token on a free port, with
its own HOME and Jupyter folders, and stops it afterwards; `open_chromium` launches Debian's headless chromium
through Playwright (which never downloads a browser here). The scripted `%%architect` cells are set up by
each test: `write_notebook` only writes the cells it is given.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.kernel import started_process_env

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
LABEXTENSION = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "architect-nb" / "package.json"
VENV_BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]

# The labels of the approval prompt's buttons (architect_nb.notebook's widget).
APPROVAL_BUTTONS = ("Approve", "Deny", "Abort run", "Approve all like this")
#: Jupyter AI's servers start jupyter_server_mcp, whose MCP server listens on port 3001 unless told otherwise:
#: two such servers at once (two workers' Jupyter AI tests) and the second exits with "address already in
#: use", so the browser finds nothing at its URL. Port 0 lets the OS pick.
JUPYTER_AI_ARGS = ["--MCPExtensionApp.mcp_port=0"]


def require_tools(*, module: str = "jupyterlab") -> None:
    """Skip on a developer machine without chromium; CI installs it, so there a missing piece fails."""
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append("Debian's chromium (apt-get install chromium)")
    if not LABEXTENSION.exists():
        missing.append("the built labextension (make labextension)")
    for name in ("playwright.sync_api", module):
        try:
            __import__(name)
        except ImportError:
            missing.append(f"{name.split('.')[0]} (make setup installs the dev group)")
    if missing:
        message = "the browser test needs " + ", ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def stop_process(proc: subprocess.Popen[bytes], grace: float = 20) -> None:
    """Terminate a server and wait `grace` seconds for it to stop (its own children with it), then kill it."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str, proc: subprocess.Popen[bytes], timeout: float, path: str = "/api/status") -> bool:
    """Whether the server answers `path` before it exits or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}{path}", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def wait_for_server(
    url: str,
    proc: subprocess.Popen[bytes],
    log: Path,
    name: str,
    timeout: float = 90,
    path: str = "/api/status",
) -> None:
    """Wait until the server answers `path`; fail the test with its log if it exits or stays silent."""
    if _answers(url, proc, timeout, path):
        return
    if proc.poll() is not None:
        pytest.fail(f"{name} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
    pytest.fail(f"{name} did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


def write_notebook(root: Path, cells: list[str], name: str = "demo.ipynb") -> Path:
    """A notebook of code cells with the given sources, on the python3 kernel."""
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell-{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
    }
    path = root / name
    path.write_text(json.dumps(notebook, indent=1))
    return path


@contextmanager
def jupyter_server(
    tmp_path: Path,
    root: Path,
    *,
    module: str,
    app_args: list[str],
    python: Path | None = None,
    our_labextensions: bool = False,
    warm_up: bool = False,
) -> Iterator[tuple[str, Path]]:
    """Run `python -m MODULE` (jupyterlab or notebook) on `root`; yield its URL and a folder for artifacts.

    The server gets its own HOME and Jupyter folders under tmp_path and the venv's bin first on PATH, so the
    kernel and the commands the agent runs use the venv's tools. Its log is tmp_path/jupyter-MODULE.log.
    `python` is another venv's interpreter to run it with (default: this one's); `our_labextensions` gives
    that server this venv's labextensions too (ours and ipywidgets'), through `JUPYTER_PATH`, and our server
    extension, with the configuration file the wheel installs.

    The kernels skip the background import of LiteLLM after `%load_ext` (`notebook/warm_up.py`) unless
    `warm_up`: the scripted models never use it, and it cost each kernel 5 s of CPU. With it, six of these
    tests used 52 s of kernel CPU and took 148 s alone; without, 11 s and 113 s. The test of the approval
    buttons keeps it, as users' kernels have it (the hub's and the gateway's kernels have it too).
    """
    python = python or Path(sys.executable)
    home = tmp_path / "home"
    # No "get Jupyter news?" toast over the screenshots (and no fetch of it).
    notification = (
        home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    )
    notification.parent.mkdir(parents=True)
    notification.write_text('{"fetchNews": "false"}')
    env = {
        **os.environ,
        "PATH": f"{python.parent}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
        **started_process_env(warm_up=warm_up),
    }
    if our_labextensions:
        env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
        enabled = Path(env["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.d"
        enabled.mkdir(parents=True)
        shutil.copy(REPO / "jupyter-config" / "architect_nb.json", enabled)  # as the wheel installs it
    log = tmp_path / f"jupyter-{module}.log"
    for _attempt in range(5):
        # The free port may be taken before the server binds it (another worker's kernel or server): then it
        # exits (no retries on other ports, which the test would not know) and starts on another.
        port = free_port()
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [
                    str(python),
                    "-m",
                    module,
                    "--no-browser",
                    "--allow-root",
                    f"--port={port}",
                    "--ServerApp.port_retries=0",
                    "--ip=127.0.0.1",
                    f"--ServerApp.root_dir={root}",
                    "--IdentityProvider.token=",
                    "--ServerApp.password=",
                    *app_args,
                ],
                cwd=root,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        url = f"http://127.0.0.1:{port}"
        if _answers(url, proc, 90) or b"already in use" not in log.read_bytes():
            break  # up, or down for another reason, which wait_for_server reports
    try:
        wait_for_server(url, proc, log, f"python -m {module}")
        artifacts = tmp_path / "screenshots"
        artifacts.mkdir()
        yield url, artifacts
    finally:
        stop_process(proc)


@contextmanager
def open_chromium(profile: Path, url: str, *, height: int = 2600) -> Iterator[tuple[Any, list[str]]]:
    """A page in headless chromium, and the list of requests it made outside `url` (which must stay empty)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1100, "height": height},
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(60_000)
            outside: list[str] = []
            page.on(
                "request",
                lambda request: (
                    None if request.url.startswith((url, "data:", "blob:")) else outside.append(request.url)
                ),
            )
            yield page, outside
        finally:
            context.close()


def kernel_idle(page: Any) -> None:
    """Wait until the current notebook's kernel is idle (needs the app exposed as window.jupyterapp)."""
    page.wait_for_function(
        """() => {
            const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
            const kernel = widget && widget.sessionContext && widget.sessionContext.session
                && widget.sessionContext.session.kernel;
            return !!kernel && kernel.status === 'idle';
        }""",
        timeout=90_000,
    )


def run_all_cells(page: Any) -> None:
    # Not awaited: the command's promise settles only when every cell has finished.
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def assert_buttons_not_clipped(page: Any, labels: tuple[str, ...] = APPROVAL_BUTTONS) -> None:
    for label in labels:
        button = page.get_by_role("button", name=label, exact=True)
        clipped = button.evaluate("b => b.scrollWidth > b.clientWidth")
        assert not clipped, f"the {label!r} button's label is cut off"


def wait_for_file(path: Path, text: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        source = path.read_text()
        if text in source:
            return source
        time.sleep(0.2)
    pytest.fail(f"{path} never contained {text!r}:\n{path.read_text()}")
