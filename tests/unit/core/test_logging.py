from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from architect_nb.config import LoggingConfig
from architect_nb.log import configure_logging, get_logger
from architect_nb.redaction import Redactor, default_redactor


@pytest.fixture(autouse=True)
def _restore_logging() -> object:
    yield
    configure_logging()


def test_human_console_and_json_file(tmp_path: Path) -> None:
    stream = io.StringIO()
    log_file = tmp_path / "logs" / "run.jsonl"
    configure_logging(LoggingConfig(level="warning", file=log_file), stream=stream)
    log = get_logger("test")
    log.info("quiet_on_console", step=1)
    log.warning("shown_everywhere", tool="read_file")
    console = stream.getvalue()
    assert "shown_everywhere" in console and "tool=read_file" in console
    assert "quiet_on_console" not in console
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [r["event"] for r in records] == ["quiet_on_console", "shown_everywhere"]
    assert (
        records[1]["level"] == "warning" and records[1]["tool"] == "read_file" and "timestamp" in records[1]
    )


def test_secrets_never_reach_the_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnop1234")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-verysecret-42")
    default_redactor().refresh()
    stream = io.StringIO()
    log_file = tmp_path / "run.jsonl"
    configure_logging(LoggingConfig(level="info", file=log_file), stream=stream)
    get_logger("t").info(
        "tool_call", args={"command": "echo tok-verysecret-42"}, output="key=sk-test-abcdefghijklmnop1234"
    )
    for text in (stream.getvalue(), log_file.read_text()):
        assert "tok-verysecret-42" not in text and "sk-test-abcdefghijklmnop1234" not in text
        assert "[REDACTED:MY_SERVICE_TOKEN]" in text and "[REDACTED:OPENAI_API_KEY]" in text
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("MY_SERVICE_TOKEN")
    default_redactor().refresh()


def test_warnings_go_to_stderr_and_nothing_to_stdout_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    get_logger("t").info("below_the_default_level")
    get_logger("t").warning("to_stderr", tool="read_file")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "to_stderr" in captured.err and "tool=read_file" in captured.err
    assert "below_the_default_level" not in captured.err


def test_redactor_rules() -> None:
    redactor = Redactor(
        {
            "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
            "DB_PASSWORD": "hunter22",
            "PATH": "/usr/bin",
            "X_TOKEN": "1",
        }
    )
    text = "aws=wJalrXUtnFEMI/K7MDENG pw=hunter22 path=/usr/bin short=1 gh=ghp_" + "a" * 36
    assert redactor.redact(text) == (
        "aws=[REDACTED:AWS_SECRET_ACCESS_KEY] pw=[REDACTED:DB_PASSWORD] path=/usr/bin short=1 gh=[REDACTED]"
    )
    assert redactor.redact_data({"a": ["hunter22", ("x", "hunter22")], "n": 3}) == {
        "a": ["[REDACTED:DB_PASSWORD]", ("x", "[REDACTED:DB_PASSWORD]")],
        "n": 3,
    }
