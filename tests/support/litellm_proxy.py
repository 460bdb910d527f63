"""A real LiteLLM proxy (`litellm --config`, from `make setup-proxy`'s venv) in front of a stub server.

It serves two models, both the stub's `openai/gpt-4o-mini`: `gpt-4o-mini`, and `capped`, a deployment with a
budget of a millionth of a dollar, which the first call spends (the budget the proxy keeps in memory: there
is no database, see docs/classroom.md). The master key is `MASTER`. It is
stopped within 20 s (then killed).
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from architect_nb.testing.openai_server import OpenAIStubServer
from tests.support.browser import free_port, stop_process
from tests.support.kernel import ROOT

LITELLM = ROOT / ".venv-proxy" / "bin" / "litellm"
MASTER = "sk-teacher-0123456789"
CAPPED = "max_budget: 0.000001, budget_duration: 1d"  # a millionth of a dollar: spent by the first call
START_S = 240.0  # the proxy imports its whole server stack; on two busy cores that takes a while


@contextmanager
def litellm_proxy(stub: OpenAIStubServer, folder: Path) -> Iterator[str]:
    """Start the proxy; yield its URL. Skips without .venv-proxy (fails in CI, which makes it)."""
    if not LITELLM.exists():
        message = "the LiteLLM proxy tests need .venv-proxy: run `make setup-proxy` (make pytest does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    upstream = f'model: openai/gpt-4o-mini, api_base: "{stub.url}", api_key: sk-upstream'
    config = folder / "litellm_config.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: gpt-4o-mini\n    litellm_params: {{{upstream}}}\n"
        f"  - model_name: capped\n    litellm_params: {{{upstream}, {CAPPED}}}\n"
        f"general_settings: {{master_key: {MASTER}}}\n"
    )
    port = free_port()
    log = folder / "litellm.log"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False"}
    env.pop("DATABASE_URL", None)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=folder,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the LiteLLM proxy exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health/liveliness", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"the LiteLLM proxy did not start in {START_S:g} s:\n{log.read_text()[-3000:]}"
                    )
                time.sleep(0.5)
        yield url
    finally:
        stop_process(proc)
