"""One unattended run, as papermill or `jupyter execute` runs it over many workspaces: `run_unattended`.

A batch notebook (`docs/batch/task.ipynb`) takes the task, the model and the mode as parameters, with the
allow rules that answer the approvals nobody is there to give (`AllowRules`). The run writes a summary (JSON:
status, steps, cost, tokens, changed files, the calls the rules answered) where it is told, next to the
output notebook, redacted as everything saved is. It raises `UnattendedRunFailed` unless the run succeeded,
so the notebook's execution fails, and papermill exits non-zero. A run that cannot start (a broken config,
an unreadable rule) writes its summary too.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from architect_nb.agent.factory import create_loop
from architect_nb.config import load_config
from architect_nb.config.schema import ConfirmMode
from architect_nb.execution.confirmation.allow_rules import AllowRules
from architect_nb.redaction import default_redactor

__all__ = ["UnattendedRunFailed", "run_unattended", "write_summary"]

SUMMARY_VERSION = 1


class UnattendedRunFailed(RuntimeError):  # noqa: N818 - says what happened, as papermill shows it
    """The run did not succeed; `summary` is what was written."""

    def __init__(self, message: str, summary: dict[str, Any]) -> None:
        super().__init__(message)
        self.summary = summary


def run_unattended(
    task: str,
    *,
    workspace: str | Path = ".",
    model: str | None = None,
    mode: ConfirmMode = "confirm-sensitive",
    allow: Iterable[str] | None = None,
    summary_path: str | Path | None = None,
    agent: str = "build",
    max_steps: int | None = None,
    budget_usd: float | None = None,
    timeout_s: float | None = None,
) -> dict[str, Any]:
    """Run `task` in `workspace` with nobody to approve: the allow rules answer. Returns the summary, also
    written to `summary_path` when given; raises `UnattendedRunFailed` when the run did not succeed."""
    started = time.time()
    root = Path(workspace).expanduser().resolve()
    summary: dict[str, Any] = {
        "version": SUMMARY_VERSION,
        "task": task,
        "workspace": str(root),
        "model": model,
        "mode": mode,
        "allow": list(allow or ()),
    }
    try:
        rules = AllowRules.from_texts(summary["allow"])
        config = load_config(overrides={"workspace.root": str(root)}, search_from=root)
        summary["model"] = model or config.llm.model
        loop = create_loop(
            config,
            agent=agent,
            model=model,
            mode=mode,
            confirmer=rules,
            max_steps=max_steps,
            budget_usd=budget_usd,
            timeout_s=timeout_s,
        )
        result = loop.run(task)
    except Exception as exc:  # the run could not start: the summary says why, and the cell fails
        summary |= {
            "status": "failed",
            "stop_reason": "not_started",
            "message": f"{type(exc).__name__}: {exc}",
        }
        summary |= _times(started)
        write_summary(summary, summary_path)
        raise UnattendedRunFailed(f"The run could not start: {summary['message']}", summary) from exc
    summary |= {
        "status": result.status,
        "stop_reason": result.stop_reason,
        "message": result.message,
        "steps": result.steps,
        "cost_usd": round(result.cost_usd, 6),
        "total_tokens": result.total_tokens,
        "files_changed": sorted(result.files_changed),
        "approvals": rules.asked,
        "final_text": result.final_text,
        "run_id": result.run_id,
    }
    summary |= _times(started)
    write_summary(summary, summary_path)
    if result.status != "success":
        raise UnattendedRunFailed(
            f"The run ended {result.status} ({result.stop_reason}): {result.message}", summary
        )
    return summary


def write_summary(summary: dict[str, Any], path: str | Path | None) -> None:
    """Write `summary` as JSON to `path` (if any), redacted, in one step: a reader never sees half of it."""
    if path is None:
        return
    summary = default_redactor().redact_data(summary)
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(summary, out, indent=2, ensure_ascii=False, default=str)
            out.write("\n")
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _times(started: float) -> dict[str, Any]:
    return {"started": round(started, 3), "duration_s": round(time.time() - started, 3)}
