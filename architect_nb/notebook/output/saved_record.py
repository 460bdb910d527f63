"""What a finished run leaves in the notebook: its transcript with long tool outputs cut, the whole elsewhere.

A notebook keeps every run's output (the JSON transcript and its HTML), so a 400-step run of long outputs
would make a notebook of many megabytes. The cell keeps each tool output up to `SAVED_OUTPUT_CHARS`
(head and tail, with a line that says how much was cut and where it is); the whole transcript is written,
redacted, to the run's checkpoint folder, `<checkpoints.dir>/<run_id>/transcript.json` (0600, pruned with the
run after `checkpoints.keep_days`), and `%architect transcript RUN` shows it whole while the kernel lives.
Diffs are never cut: they are what was approved, and the labextension shows all of them.

What the model was sent at each step (the inspector's record) stays in the transcript file too: the cell
keeps its compact form (how many messages, how many new, the context meter), which the HTML twin shows on
GitHub and nbviewer with the step's usage; `%architect inspect RUN:STEP` shows the whole while the kernel
lives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from architect_nb.agent.conversation.inspector import compact
from architect_nb.execution.checkpoints.files import RUN_ID_PATTERN
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.log import get_logger

__all__ = ["SAVED_OUTPUT_CHARS", "for_notebook", "save_whole"]

#: Characters of one tool output kept in the notebook.
SAVED_OUTPUT_CHARS = 1000


def save_whole(engine: ExecutionEngine, payload: Mapping[str, Any]) -> str:
    """Write the whole (already redacted) transcript to the run's checkpoint folder; its path, or ''."""
    files = engine.checkpoints.on_disk
    run_id = str(payload.get("run_id") or "")
    if files is None or not RUN_ID_PATTERN.match(run_id):
        return ""
    try:
        data = json.dumps(payload, default=str, ensure_ascii=False).encode("utf-8", "replace")
        return str(files.save_transcript(run_id, data))
    except OSError as exc:  # the notebook still gets its (shortened) record
        get_logger(__name__).warning("transcript_not_saved", run_id=run_id, problem=str(exc))
        return ""


def for_notebook(payload: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`payload` with each tool output longer than `SAVED_OUTPUT_CHARS` cut in the middle, saying where the
    whole is (`where`, the transcript file, or this kernel's `%architect transcript`)."""
    run_id = str(payload.get("run_id") or "")
    place = where or f"%architect transcript {run_id} (in this kernel)"
    events = []
    for event in payload.get("events", []):
        if event.get("kind") == "model_request":
            events.append(compact(event))
            continue
        if event.get("kind") == "model_reply":  # its text, calls and usage are in the notebook already
            continue
        output = event.get("output") if event.get("kind") == "tool_result" else None
        if isinstance(output, str) and len(output) > SAVED_OUTPUT_CHARS:
            head = output[: SAVED_OUTPUT_CHARS * 2 // 3]
            tail = output[-(SAVED_OUTPUT_CHARS // 3) :]
            cut = len(output) - len(head) - len(tail)
            note = (
                f"\n[... {cut:,} characters not kept in the notebook; the whole output is in {place} ...]\n"
            )
            events.append({**event, "output": head + note + tail})
        else:
            events.append(event)
    return {**payload, "events": events}
