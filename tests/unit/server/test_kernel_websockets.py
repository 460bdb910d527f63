"""The server extension replaces only jupyter-server-documents' websocket connection, as 0.3.3 writes it
(the real server is tested in tests/kernel/test_documents_server_websockets.py)."""

from __future__ import annotations

import types

from architect_nb.server.kernel_websockets import DOCUMENTS_CONNECTION, own_identities


def _class_named(qualified: str, **attributes: object) -> type:
    module, _, name = qualified.rpartition(".")
    cls = types.new_class(name, (), exec_body=lambda ns: ns.update(attributes))
    cls.__module__ = module
    return cls


def test_only_jupyter_server_documents_connection_is_replaced() -> None:
    assert own_identities(None) is None
    assert own_identities("jupyter_server_documents.websocket_connection.KernelWebsocketConnection") is None
    stock = "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection"
    assert own_identities(_class_named(stock, _listen=lambda self, channel: None)) is None


def test_a_version_written_otherwise_is_left_alone() -> None:
    assert own_identities(_class_named(DOCUMENTS_CONNECTION)) is None  # no `_listen` to reuse


def test_the_replacement_is_a_subclass_that_connects_with_the_tabs_own_session() -> None:
    documents = _class_named(DOCUMENTS_CONNECTION, _listen=lambda self, channel: None)
    replaced = own_identities(documents)
    assert replaced is not None and issubclass(replaced, documents)
    assert "connect" in vars(replaced)
