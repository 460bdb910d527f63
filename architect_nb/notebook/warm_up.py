"""Loading the model client in the background after `%load_ext`, so the first `%%architect` cell is quick.

LiteLLM takes seconds to import (3 s on an idle machine, over 5 s on a loaded one), and the first model call
used to pay for it. `%load_ext architect_nb` now starts one daemon thread that, after a short pause (so the
`%load_ext` cell replies first), imports LiteLLM through `import_litellm` and the agent's modules (engine,
tools, shell grammar), and makes one mocked LiteLLM call (`mock_response`: nothing is sent), since LiteLLM
imports much of itself on its first call. A kernel whose configuration calls a gateway (`llm.gateway`) never
imports LiteLLM: the warm-up imports the gateway's HTTP client instead.

Then it imports the notebook layer the first cell uses (`CELL_MODULES`: the live view and ipywidgets, the
approval prompt, the notebook context). That is half a second of CPU, and in a class whose 30 kernels start
their first cells together on two cores it kept each run from starting for seconds
(benchmarks/classroom_load.py).

The warm-up displays nothing and opens no comm (importing ipywidgets registers its comm target, as in any
kernel that imports it), so it is safe beside ipykernel's own threads and the agent's worker. A cell that
starts before it is done waits only for the rest: `import_litellm` holds a lock, and Python's import locks
make two threads importing one module share the work. If no cell ever runs, the thread simply ends; a
failure is logged, never shown, and the first cell then imports as before. `ARCHITECT_WARMUP=0` turns it
off.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import time

__all__ = ["start_warm_up", "warm_up_thread"]

_PAUSE = 0.3  # seconds: the %load_ext cell's reply goes out before the imports start
#: What `notebook.runner.run_cell` imports on a first cell, beyond the model client and the agent: a kernel
#: test checks that a first cell after the warm-up imports no module of ours or of ipywidgets.
CELL_MODULES = (
    "architect_nb.notebook.output.live",
    "architect_nb.notebook.questions.approval",
    "architect_nb.notebook.kernel.kernel_session",
    "architect_nb.notebook.context.context_vars",
    "architect_nb.notebook.context.opening_note",  # and the outline, references and staleness it imports
    "architect_nb.notebook.context.sources",  # and the kernel facts
    "architect_nb.execution.checkpoints.review",
    "ahocorasick_rs",  # the secrets' prefilter, built when the cell refreshes the redactor
)
_lock = threading.Lock()
_thread: threading.Thread | None = None


def start_warm_up(pause: float = _PAUSE) -> threading.Thread | None:
    """Start the background import once per process (unless `ARCHITECT_WARMUP` is 0/false/no/off)."""
    global _thread  # noqa: PLW0603 - one warm-up per kernel process
    if os.environ.get("ARCHITECT_WARMUP", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_warm, args=(pause,), name="architect-warm-up", daemon=True)
            _thread.start()
        return _thread


def warm_up_thread() -> threading.Thread | None:
    """The warm-up thread, if one was started (for tests and benchmarks)."""
    return _thread


def _warm(pause: float) -> None:
    time.sleep(pause)
    try:
        if _through_gateway():
            _warm_gateway()
            return
        from architect_nb.agent.models.litellm_import import import_litellm

        litellm = import_litellm()
        import architect_nb.agent.factory
        import architect_nb.notebook.runner  # noqa: F401 - what the first cell imports next

        # LiteLLM imports much of itself on its first call (file-id handling, logging, tokenizer tables); a
        # mocked call sends nothing anywhere and leaves those imported. Its HTTP stack loads with the first
        # real request, so that goes in too.
        for stream in (False, True):
            answer = litellm.completion(
                model="openai/architect-warm-up",
                messages=[{"role": "user", "content": "warm up"}],
                mock_response="ok",
                api_key="warm-up",
                stream=stream,
            )
            for _chunk in answer if stream else ():
                pass
        import h11  # noqa: F401
        import httpcore  # noqa: F401

        _import_cell_modules()
    except Exception as exc:  # the first cell imports them itself, and says what is wrong
        from architect_nb.log import get_logger

        # A kernel shut down during the warm-up fails it too, and its log stream may be closed by then.
        with contextlib.suppress(Exception):
            get_logger(__name__).warning("warm_up_failed", problem=f"{type(exc).__name__}: {exc}")


def _through_gateway() -> bool:
    """Whether the kernel's configuration (the file found from its folder, the `ARCHITECT_*` variables a hub
    sets) calls a gateway: then LiteLLM is never imported, and its client is warmed up instead."""
    try:
        from architect_nb.agent.models.gateway import uses_gateway
        from architect_nb.config import load_config

        return uses_gateway(load_config().llm)
    except Exception:  # a broken config file: the first cell says what is wrong with it
        return False


def _warm_gateway() -> None:
    import architect_nb.agent.factory
    import architect_nb.notebook.runner  # noqa: F401 - what the first cell imports next
    from architect_nb.agent.models.gateway import warm_up_http

    warm_up_http()
    _import_cell_modules()


def _import_cell_modules() -> None:
    for name in CELL_MODULES:
        importlib.import_module(name)
