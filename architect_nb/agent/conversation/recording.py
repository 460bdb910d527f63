"""Record mode: a thread's runs written as a script for the scripted model, which replays them run by run.

`create_loop(..., record_to=path)` has the loop call `record_thread` after each run. The script has one entry
per run under `runs:` (its task and its assistant turns, from `scripted.script_from_messages`), redacted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from architect_nb.agent.conversation.thread import Thread
from architect_nb.agent.models.scripted import script_from_messages
from architect_nb.redaction import default_redactor

__all__ = ["record_thread", "script_from_thread"]


def script_from_thread(thread: Thread) -> dict[str, Any]:
    """Record mode for a thread: one entry per run (its task and assistant turns), replayed run by run."""
    runs = []
    for run in thread.runs:
        end = run.end or len(thread.messages)
        runs.append({"task": run.task, **script_from_messages(thread.messages[run.start : end])})
    return {"runs": runs}


def record_thread(thread: Thread, path: Path) -> None:
    """Write the thread's runs to `path` as a script that replays them run by run (redacted)."""
    script = default_redactor().redact_data(script_from_thread(thread))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(script, sort_keys=False, allow_unicode=True), encoding="utf-8")
