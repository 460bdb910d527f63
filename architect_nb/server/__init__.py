"""architect-nb's Jupyter server extension: what the server side must do for the agent's kernels.

Today one thing: under jupyter-server-documents (Jupyter AI 3's document server), every browser tab's kernel
websocket gets its own identity on the kernel's shell channel (`kernel_websockets`). The extension is on
wherever the package is installed beside Jupyter Server (`jupyter-config/architect_nb.json`); with any other
server it changes nothing.

Depends on no other package of `architect_nb`: it runs in the Jupyter server's process, not the kernel's
(jupyter_client and jupyter-server-documents are imported there when the extension loads).
"""

from __future__ import annotations

from typing import Any

__all__ = ["_jupyter_server_extension_points", "_load_jupyter_server_extension"]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "architect_nb.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from architect_nb.server.kernel_websockets import own_identities

    settings = serverapp.web_app.settings
    replaced = own_identities(settings.get("kernel_websocket_connection_class"))
    if replaced is not None:
        settings["kernel_websocket_connection_class"] = replaced
        serverapp.log.info(
            "architect-nb: each kernel websocket of jupyter-server-documents has its own identity"
        )
