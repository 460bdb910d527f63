"""Logging through structlog, configured in one place.

People get a readable line on stderr (warnings and up by default); machines get JSON, one event per line, in
`logging.file`. Every event passes the secret redactor first, so no key reaches either.
"""

from __future__ import annotations

import atexit
import json
import sys
import threading
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import IO, Any

import structlog

from architect_nb.config.schema import LoggingConfig
from architect_nb.redaction import default_redactor

__all__ = ["configure_logging", "get_logger"]

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40, "exception": 40, "critical": 50}
_configured = False
_lock = threading.Lock()
_sinks: _Sinks | None = None


class _Sinks:
    """The last processor: JSON to the file and a readable line to the stream, each at its own level."""

    def __init__(
        self, console_level: int, stream: IO[str] | None, file: Path | None, file_level: int
    ) -> None:
        self.console_level = console_level
        self.stream = stream
        self.file_level = file_level
        self.file = file.open("a", encoding="utf-8") if file is not None else None
        self.console = structlog.dev.ConsoleRenderer(colors=False)
        self.lock = threading.Lock()

    def __call__(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> Any:
        level = _LEVELS.get(method_name, 20)
        with self.lock:
            if self.file is not None and level >= self.file_level:
                self.file.write(json.dumps(event_dict, default=str, ensure_ascii=False) + "\n")
                self.file.flush()
            if self.stream is not None and level >= self.console_level:
                self.stream.write(str(self.console(logger, method_name, dict(event_dict))) + "\n")
        raise structlog.DropEvent

    def close(self) -> None:
        with self.lock:
            if self.file is not None:
                self.file.close()
                self.file = None


def _redact(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> Mapping[str, Any]:
    return default_redactor().redact_data(event_dict)  # type: ignore[no-any-return]


def configure_logging(
    config: LoggingConfig | None = None, *, stream: IO[str] | None = None, console: bool = True
) -> None:
    """Set up logging from `config` (default: warnings to stderr, no file). Safe to call again.

    `console=False` writes to the file only: in a kernel, anything on stderr lands in the running cell."""
    global _configured, _sinks  # noqa: PLW0603 - structlog's configuration is process-wide
    config = config or LoggingConfig()
    console_level = _LEVELS[config.level]
    file_level = min(
        console_level, _LEVELS["info"]
    )  # the file keeps the audit trail even when the console is quiet
    if config.file is not None:
        config.file.parent.mkdir(parents=True, exist_ok=True)
    out = (stream if stream is not None else sys.stderr) if console else None
    sinks = _Sinks(console_level, out, config.file, file_level)
    lowest = min(console_level, file_level) if config.file is not None else console_level
    with _lock:
        if _sinks is not None:
            _sinks.close()
        else:
            atexit.register(_close_sinks)  # the log file is closed at exit, not left to the collector
        _sinks = sinks
        structlog.configure(
            processors=[
                structlog.contextvars.merge_contextvars,
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.format_exc_info,
                _redact,
                sinks,
            ],
            wrapper_class=structlog.make_filtering_bound_logger(lowest),
            cache_logger_on_first_use=False,
        )
        _configured = True


def _close_sinks() -> None:
    with _lock:
        if _sinks is not None:
            _sinks.close()


def get_logger(name: str | None = None) -> Any:
    """A structlog logger; configures the defaults on first use so nothing is ever printed to stdout."""
    if not _configured:
        configure_logging()
    return structlog.get_logger(name)
