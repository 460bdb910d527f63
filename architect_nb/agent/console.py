"""A readable transcript of a run for terminals and logs: one line per event, diffs indented."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from architect_nb.agent.events import (
    AgentEvent,
    ConfirmationAnswered,
    ConfirmationAsked,
    CostUpdate,
    RunFinished,
    RunStarted,
    RunWarning,
    StepStarted,
    TextDelta,
    ToolCallRequested,
    ToolResultEvent,
)
from architect_nb.execution.confirmation.confirmers import show, show_block
from architect_nb.redaction import default_redactor

__all__ = ["ConsolePrinter", "format_arguments"]

_MAX_OUTPUT_LINES = 12


def format_arguments(arguments: dict[str, Any], limit: int = 80) -> str:
    parts = []
    for key, value in arguments.items():
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > limit:
            text = text[: limit - 3] + "..."
        parts.append(f"{show(str(key))}={show(text)}")
    return ", ".join(parts)


class ConsolePrinter:
    """An event sink that writes a plain-text transcript as the run goes. Secrets are redacted."""

    def __init__(self, stream: IO[str], *, color: bool = False) -> None:
        self.stream = stream
        self.color = color
        self._in_text = False
        self._redact: Callable[[str], str] = default_redactor().redact

    def __call__(self, event: AgentEvent) -> None:
        if not isinstance(event, TextDelta) and self._in_text:
            self._write("\n")
            self._in_text = False
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event)
        self.stream.flush()

    def _write(self, text: str) -> None:
        self.stream.write(self._redact(text))

    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _on_run_started(self, e: RunStarted) -> None:
        dry = ", dry run" if e.dry_run else ""
        self._write(f"Run {e.run_id}: agent {e.agent}, model {e.model}, mode {e.mode}{dry}\nTask: {e.task}\n")

    def _on_step_started(self, e: StepStarted) -> None:
        self._write(self._paint(f"\n── step {e.step} ", "1") + "\n")

    def _on_text_delta(self, e: TextDelta) -> None:
        self._write(e.text)
        self._in_text = True

    def _on_tool_call(self, e: ToolCallRequested) -> None:
        self._write(f"→ {e.tool}({format_arguments(e.arguments)})\n")

    def _on_confirmation_asked(self, e: ConfirmationAsked) -> None:
        self._write(f"  ? approval asked for {e.tool} ({e.sensitivity})\n")
        if e.preview:
            self._diff(e.preview)

    def _on_confirmation_answered(self, e: ConfirmationAnswered) -> None:
        reason = f": {show(e.reason)}" if e.reason else ""
        self._write(f"  ? {e.decision}{reason}\n")

    def _on_tool_result(self, e: ToolResultEvent) -> None:
        mark = "✓" if e.success else "✗"
        self._write(f"  {mark} {e.status} in {e.duration_s * 1000:.0f} ms\n")
        text = e.output if e.success else f"{e.error}\n{e.output}".strip()
        show_diff = bool(e.diff and e.success)
        if show_diff and e.diff:
            # The diff is printed below, coloured; drop the copy inside the output.
            text = text.replace(e.diff.rstrip("\n"), "").strip() if e.diff.rstrip("\n") in text else text
        lines = show_block(text).splitlines()
        for line in lines[:_MAX_OUTPUT_LINES]:
            self._write(f"    {line}\n")
        if len(lines) > _MAX_OUTPUT_LINES:
            self._write(f"    ... {len(lines) - _MAX_OUTPUT_LINES} more lines\n")
        if show_diff and e.diff:
            self._diff(e.diff)

    def _diff(self, diff: str) -> None:
        for line in show_block(diff.rstrip("\n")).splitlines():
            code = (
                "32"
                if line.startswith("+")
                else "31"
                if line.startswith("-")
                else "36"
                if line.startswith("@@")
                else ""
            )
            self._write("    " + (self._paint(line, code) if code else line) + "\n")

    def _on_cost(self, e: CostUpdate) -> None:
        price = f"${e.total_cost_usd:.4f}" if e.priced else "not priced"
        cached = f", {e.total_cached_tokens:,} cached" if e.total_cached_tokens else ""
        self._write(self._paint(f"  [{e.total_tokens} tokens{cached}, {price}]", "2") + "\n")

    def _on_warning(self, e: RunWarning) -> None:
        self._write(self._paint(f"  ! {e.message}", "33") + "\n")

    def _on_run_finished(self, e: RunFinished) -> None:
        files = ", ".join(e.files_changed) or "none"
        self._write(
            f"\n{e.status.upper()} ({e.stop_reason}) after {e.steps} steps, {e.duration_s:.1f} s: "
            f"{e.message}\n"
            f"Files changed: {files}. Tokens: {e.total_tokens}"
            + (f" ({e.total_cached_tokens:,} cached)" if e.total_cached_tokens else "")
            + f", cost: ${e.total_cost_usd:.4f}.\n"
        )
        if e.undo_note:
            self._write(f"{e.undo_note}\n")
