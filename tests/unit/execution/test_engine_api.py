"""Each call through the execution engine is logged once through structlog."""

from __future__ import annotations

import io
import json
from pathlib import Path

from architect_nb.config.schema import LoggingConfig
from architect_nb.log import configure_logging
from tests.support.engine import make_engine


def test_each_call_is_logged_once(workspace: Path, tmp_path: Path) -> None:
    log_file = tmp_path / "log.jsonl"
    configure_logging(LoggingConfig(level="warning", file=log_file), stream=io.StringIO())
    try:
        engine, _ = make_engine(workspace)
        engine.execute_tool_call("noop", {"value": "x"})
        engine.execute_tool_call("missing_tool", {})
    finally:
        configure_logging()
    events = [json.loads(line) for line in log_file.read_text().splitlines()]
    calls = [e for e in events if e["event"] == "tool_call"]
    assert [(c["tool"], c["success"]) for c in calls] == [("noop", True), ("missing_tool", False)]
    assert calls[0]["args"] == {"value": "x"}
    assert [s["step"] for s in calls[0]["steps"]] == [
        "lookup",
        "validate",
        "guardrails",
        "pre_hooks",
        "confirm",
        "execute",
    ]
    assert calls[0]["duration_ms"] >= 0 and calls[0]["run_id"] == engine.run_id


def test_long_arguments_are_shortened_in_the_log(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    engine.execute_tool_call("noop", {"value": "x" * 10_000})
    (entry,) = engine.audit.to_transcript()
    assert len(entry["args"]["value"]) < 2100 and entry["args"]["value"].endswith("[10000 chars]")
