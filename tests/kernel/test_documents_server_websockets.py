"""Under jupyter-server-documents, each browser tab's kernel websocket has its own identity on the kernel's
shell channel (architect_nb.server.kernel_websockets), so a tab's requests are answered to that tab.

A real server from `.venv-docs` (`make setup-documents`) with our server extension as the wheel enables it,
a real kernel, and two websockets speaking the kernel protocol, as two JupyterLab tabs do. Without the
extension, jupyter-server-documents 0.3.3 gives both sockets the kernel manager's session, the kernel's ROUTER
hands the shared identity to the newer one, and the first tab's `kernel_info_reply` goes to the second.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import jupyter_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

DOCS_PYTHON = Path(__file__).resolve().parents[2] / ".venv-docs" / "bin" / "python"
PROTOCOL = "v1.kernel.websocket.jupyter.org"


@pytest.fixture
def server(tmp_path: Path) -> Any:
    if not DOCS_PYTHON.exists():
        message = "this test needs .venv-docs: run `make setup-documents` (make pytest does)"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    root = tmp_path / "root"
    root.mkdir()
    with jupyter_server(
        tmp_path,
        root,
        module="jupyter_server",
        app_args=["--ServerApp.disable_check_xsrf=True"],
        python=DOCS_PYTHON,
        our_labextensions=True,
    ) as (url, _artifacts):
        yield url, tmp_path / "jupyter-jupyter_server.log"


def _request(session: str, msg_type: str) -> tuple[str, list[bytes]]:
    msg_id = uuid.uuid4().hex
    header = {
        "msg_id": msg_id,
        "msg_type": msg_type,
        "session": session,
        "username": "test",
        "version": "5.3",
    }
    parts = [json.dumps(part).encode() for part in (header, {}, {}, {})]
    return msg_id, parts


async def _tabs_asking(url: str) -> dict[str, set[str]]:
    """Two tabs connect; then each asks for the kernel's info. The replies each receives, by request id."""
    from jupyter_server.services.kernels.connection.base import (
        deserialize_msg_from_ws_v1,
        serialize_msg_to_ws_v1,
    )
    from tornado.httpclient import AsyncHTTPClient
    from tornado.websocket import websocket_connect

    created = await AsyncHTTPClient().fetch(f"{url}/api/kernels", method="POST", body="{}")
    kernel = json.loads(created.body)["id"]
    ws_url = url.replace("http://", "ws://")
    tabs = {}
    for name in ("ada", "bob"):
        tabs[name] = await websocket_connect(
            f"{ws_url}/api/kernels/{kernel}/channels?session_id={name}-{uuid.uuid4().hex}",
            subprotocols=[PROTOCOL],
        )
        await asyncio.sleep(1.0)  # connected in turn, as tabs open one after the other
    asked: dict[str, str] = {}
    for name, socket in tabs.items():
        msg_id, parts = _request(name, "kernel_info_request")
        asked[msg_id] = name
        await socket.write_message(serialize_msg_to_ws_v1(parts, "shell"), binary=True)
    received: dict[str, set[str]] = {name: set() for name in tabs}

    async def listen(name: str, socket: Any) -> None:
        while True:
            message = await socket.read_message()
            if message is None:
                return
            channel, parts = deserialize_msg_from_ws_v1(message)
            header, parent = json.loads(parts[0]), json.loads(parts[1])
            if channel == "shell" and header["msg_type"] == "kernel_info_reply":
                received[name].add(asked.get(parent.get("msg_id", ""), "?"))

    listeners = [asyncio.ensure_future(listen(name, socket)) for name, socket in tabs.items()]
    deadline = asyncio.get_running_loop().time() + 30
    while sum(map(len, received.values())) < 2 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)  # anything misrouted arrives too
    for listener in listeners:
        listener.cancel()
    for socket in tabs.values():
        socket.close()
    return received


def test_each_tab_gets_its_own_replies(server: tuple[str, Path]) -> None:
    url, log = server
    received = asyncio.run(_tabs_asking(url))
    assert received == {"ada": {"ada"}, "bob": {"bob"}}, received
    assert "each kernel websocket of jupyter-server-documents has its own identity" in log.read_text()
