"""The switch that makes a real provider call impossible: `ARCHITECT_NB_OFFLINE=1` (the test session sets it).

With it set, a model call goes out only to the scripted model or to a server on this machine (`api_base` on
loopback: the local test servers, a LiteLLM proxy started by a test); anything else fails before a byte is
sent, naming the switch. A default config's model is a real one (gpt-4o-mini), so a test that forgets to
name a scripted model fails here instead of calling, and paying, a provider.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

__all__ = ["OFFLINE_VARIABLE", "offline_refusal"]

OFFLINE_VARIABLE = "ARCHITECT_NB_OFFLINE"
_SCRIPTED = "scripted/"


def offline_refusal(model: str, api_base: str | None) -> str | None:
    """Why a call to `model` (at `api_base`) may not go out in an offline session, or None when it may."""
    if os.environ.get(OFFLINE_VARIABLE, "") in ("", "0") or model.startswith(_SCRIPTED):
        return None
    if api_base and _on_loopback(api_base):
        return None
    where = f" at {api_base}" if api_base else ""
    return (
        f"{OFFLINE_VARIABLE} is set, so no call to a real provider may go out (model {model!r}{where}): "
        "use a scripted/ model or a server on this machine."
    )


def _on_loopback(url: str) -> bool:
    host = urlsplit(url if "//" in url else f"http://{url}").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
