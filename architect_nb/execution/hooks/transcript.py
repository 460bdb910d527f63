"""`HookTranscript`: the run's transcript as a file, for the `transcript_path` Claude-style hooks are given.

Claude Code hands every hook the path of the session's transcript, and some hooks read it (a Stop hook that
checks the last answer, say). Here it is the run's JSON transcript, the payload `%architect transcript` shows
(from the Python API without the agent loop, the engine's audit records of the run), redacted like everything
saved and rewritten just before each Claude-style hook runs, so it is current. Rewriting is cheap where it
can be: the events written before are not redacted again (the redactor is refreshed between runs, never
during one), so a long run does not redact its whole history for every hook.

It lives in the run's checkpoint folder, `<checkpoints.dir>/<run_id>/transcript.json`: a private folder (0700)
and file (0600), deleted with the run's checkpoints after `checkpoints.keep_days`. With `checkpoints.persist:
false` it goes to a private temporary folder instead, removed when the hooks are let go or the process exits.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from architect_nb.execution.checkpoints.files import RUN_ID_PATTERN, CheckpointFiles
from architect_nb.log import get_logger
from architect_nb.redaction import default_redactor

__all__ = ["HookTranscript"]


class HookTranscript:
    """Writes one run's transcript where its hooks can read it. Thread-safe.

    Args:
        files: The run folders to write in; None makes a private temporary folder when first needed.
        workspace_root: The workspace the runs belong to.
    """

    def __init__(self, files: CheckpointFiles | None, workspace_root: Path) -> None:
        self._files = files
        self._root = workspace_root
        self._lock = threading.Lock()
        self._run = ""
        self._done: list[tuple[str, str]] = []  # this run's list items so far: (as JSON, redacted JSON)

    def write(self, run_id: str, source: Callable[[], Any] | None) -> str:
        """Write the current transcript of `run_id`, as `source` gives it (None: a transcript with no events);
        its path, or '' when it could not be written."""
        name = run_id if RUN_ID_PATTERN.match(run_id) else "run"
        try:
            data = source() if source is not None else {"run_id": run_id, "events": []}
            text = self._render(run_id, data)
            return str(self._store().save_transcript(name, text.encode("utf-8", "replace")))
        except Exception as exc:  # a transcript the hook cannot read is no reason to skip the hook
            get_logger(__name__).warning("hook_transcript_failed", problem=f"{type(exc).__name__}: {exc}")
            return ""

    def _render(self, run_id: str, data: Any) -> str:
        """`data` redacted, as JSON; the items of its lists already redacted for this run are reused."""
        redactor = default_redactor()
        if not isinstance(data, dict):
            return json.dumps(redactor.redact_data(data), default=str, ensure_ascii=False)
        with self._lock:
            if run_id != self._run:
                self._run, self._done = run_id, []
            parts = []
            at = 0  # position among all list items, the same from one write to the next
            for key, value in data.items():
                if not isinstance(value, list):
                    rendered = json.dumps(redactor.redact_data(value), default=str, ensure_ascii=False)
                    parts.append(f"{json.dumps(str(key))}: {rendered}")
                    continue
                items = []
                for item in value:
                    raw = json.dumps(item, default=str, ensure_ascii=False)
                    if at < len(self._done) and self._done[at][0] == raw:
                        items.append(self._done[at][1])
                    else:
                        redacted = json.dumps(redactor.redact_data(item), default=str, ensure_ascii=False)
                        self._done[at:] = [(raw, redacted)]  # what followed a changed item is stale
                        items.append(redacted)
                    at += 1
                parts.append(f"{json.dumps(str(key))}: [{', '.join(items)}]")
        return "{" + ", ".join(parts) + "}"

    def _store(self) -> CheckpointFiles:
        with self._lock:
            if self._files is None:
                folder = tempfile.mkdtemp(prefix="architect-nb-transcripts-")  # 0700
                weakref.finalize(self, shutil.rmtree, folder, True)
                self._files = CheckpointFiles(Path(folder), self._root)
            return self._files
