"""`ThreadStore`: threads saved on disk with the checkpoints, so a conversation outlives its kernel.

Layout: one JSON Lines file per thread, `<checkpoints.dir>/threads/<thread id>.jsonl`. Its first line is the
thread's header (version, id, name, workspace, where it was forked from); each save appends what is new
since the last one (messages, finished runs, the notes for the next run), so a 10-cell thread writes each
message once, with what its provider attached (thinking blocks, signatures), so a thread continued from
disk sends them back. The folder is private (0700) and the files 0600, like the checkpoints; everything is
redacted before it is written; threads not written to for `checkpoints.keep_days` are deleted when a store
opens.

Reading is forgiving where a crash can leave a mark (a half-written last line is dropped) and strict
elsewhere: a damaged file or one from a newer version is a `ThreadError` that says what to do, and the
other threads still load.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from architect_nb.agent.conversation.thread import ForkPoint, Thread, ThreadError, ThreadRun
from architect_nb.agent.models.provider_extras import redacted_message
from architect_nb.config import AppConfig
from architect_nb.redaction import Redactor, default_redactor

__all__ = ["THREAD_FORMAT_VERSION", "SavedThread", "ThreadStore", "thread_store"]

THREAD_FORMAT_VERSION = 1
_ID = re.compile(r"^[0-9a-f]{12}$")
_SUFFIX = ".jsonl"


def thread_store(config: AppConfig) -> ThreadStore | None:
    """The store `config` asks for (beside the saved checkpoints); None when `checkpoints.persist` is off."""
    from architect_nb.execution.checkpoints.files import default_checkpoint_dir

    settings = config.checkpoints
    if not settings.persist:
        return None
    base = settings.dir.expanduser() if settings.dir else default_checkpoint_dir()
    return ThreadStore(base / "threads", keep_days=settings.keep_days)


class SavedThread:
    """A thread file's header and runs, read without keeping its messages: for listings and lookups."""

    def __init__(self, path: Path, header: dict[str, Any], runs: list[ThreadRun], turns: int) -> None:
        self.path = path
        self.id = str(header["id"])
        self.name = str(header["name"])
        self.workspace = str(header["workspace"])
        self.runs = runs
        self.turns = turns
        self.updated_at = path.stat().st_mtime


class ThreadStore:
    """Saves and finds the threads under `directory`. Thread-safe."""

    def __init__(self, directory: Path, *, keep_days: float = 14.0) -> None:
        self.directory = Path(directory)
        self.keep_days = keep_days
        self._saved: dict[str, tuple[int, int, list[str]]] = {}  # id -> messages, runs, notes written
        self._lock = threading.Lock()
        with contextlib.suppress(OSError):
            self.prune()

    # ------------------------------------------------------------------ writing

    def save(self, thread: Thread) -> None:
        """Write what `thread` holds that this store has not written yet. Raises OSError on a disk error."""
        redactor = default_redactor()
        with self._lock:
            path = self._path(thread.id)
            known = self._saved.get(thread.id)
            lines: list[dict[str, Any]] = []
            if known is None or not path.exists():
                known = (0, 0, [])
                lines.append(_header(thread))
            n_messages, n_runs, notes = known
            finished = [run for run in thread.runs[n_runs:] if run.status != "running"]
            if thread.messages[n_messages:]:
                lines.append({"kind": "messages", "messages": thread.messages[n_messages:]})
            lines += [{"kind": "run", "run": asdict(run)} for run in finished]
            if thread.notes != notes:
                lines.append({"kind": "notes", "notes": list(thread.notes)})
            if not lines:
                return
            text = "".join(json.dumps(_redacted(line, redactor), ensure_ascii=False) + "\n" for line in lines)
            self._make_folder()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as out:
                out.write(text)
            self._saved[thread.id] = (len(thread.messages), n_runs + len(finished), list(thread.notes))

    def prune(self, now: float | None = None) -> int:
        """Delete threads last written more than `keep_days` ago. Returns how many."""
        cutoff = (time.time() if now is None else now) - self.keep_days * 86400
        removed = 0
        for path in self._files():
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
        return removed

    # ------------------------------------------------------------------ reading

    def load(self, thread_id: str) -> Thread:
        """The whole thread. Raises `ThreadError` if it is missing, damaged or from a newer version."""
        path = self._path(thread_id)
        header: dict[str, Any] | None = None
        messages: list[dict[str, Any]] = []
        runs: list[ThreadRun] = []
        notes: list[str] = []
        for record in self._records(path):
            kind = record.get("kind")
            if kind == "thread":
                header = record
            elif kind == "messages":
                messages.extend(record["messages"])
            elif kind == "run":
                runs.append(ThreadRun.from_dict(record["run"]))
            elif kind == "notes":
                notes = [str(n) for n in record["notes"]]
        assert header is not None  # _records checks the first line
        fork = header.get("forked_from")
        thread = Thread(
            thread_id=str(header["id"]),
            name=str(header["name"]),
            workspace=str(header["workspace"]),
            created_at=float(header.get("created_at", 0.0)),
            messages=messages,
            runs=runs,
            forked_from=ForkPoint(**fork) if isinstance(fork, dict) else None,
            notes=notes,
        )
        with self._lock:
            self._saved[thread.id] = (len(messages), len(runs), list(notes))
        return thread

    def saved(self) -> Iterator[SavedThread | ThreadError]:
        """Every thread on disk, newest first, as a `SavedThread`, or the error that keeps it from loading."""
        paths = sorted(self._files(), key=_mtime, reverse=True)
        for path in paths:
            try:
                yield self._summary(path)
            except ThreadError as exc:
                yield exc

    def find_name(self, name: str, workspace: str) -> Thread | None:
        """The most recent thread called `name` in `workspace`, or None. Names are per workspace: a thread
        of the same name in another project is another conversation."""
        for item in self.saved():
            if not isinstance(item, ThreadError) and item.name == name and item.workspace == workspace:
                return self.load(item.id)
        return None

    def find_run(self, run: str) -> tuple[SavedThread, str] | None:
        """The saved thread holding the run whose id is (or uniquely starts with) `run`, and the whole id."""
        found: dict[str, SavedThread] = {}
        for item in self.saved():
            if isinstance(item, ThreadError):
                continue
            for saved_run in item.runs:
                if saved_run.run_id == run:
                    return item, run
                if saved_run.run_id.startswith(run):
                    found.setdefault(saved_run.run_id, item)
        if len(found) > 1:
            raise ThreadError(f"more than one saved run starts with {run!r}; give more of its id")
        return next(((item, run_id) for run_id, item in found.items()), None)

    # ------------------------------------------------------------------ helpers

    def _summary(self, path: Path) -> SavedThread:
        header: dict[str, Any] = {}
        runs: list[ThreadRun] = []
        turns = 0
        for record in self._records(path):
            kind = record.get("kind")
            if kind == "thread":
                header = record
            elif kind == "run":
                runs.append(ThreadRun.from_dict(record["run"]))
            elif kind == "messages":
                turns += sum(1 for m in record["messages"] if m.get("role") == "assistant")
        return SavedThread(path, header, runs, turns)

    def _records(self, path: Path) -> Iterator[dict[str, Any]]:
        name = path.stem
        try:
            with path.open(encoding="utf-8") as handle:
                lines = handle.readlines()
        except FileNotFoundError:
            raise ThreadError(f"no saved thread {name}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ThreadError(f"the saved thread {name} cannot be read ({exc}); start a new one") from None
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("not an object")
            except ValueError:
                if number == len(lines) and number > 1 and not line.endswith("\n"):
                    return  # a save cut short by a crash: everything before it is intact
                raise ThreadError(
                    f"the saved thread file {path} is damaged at line {number}; start a new thread "
                    "(--new) or fork an earlier run; the file was left as it is"
                ) from None
            if number == 1:
                _check_header(record, path)
            yield record

    def _files(self) -> list[Path]:
        try:
            return [p for p in self.directory.iterdir() if p.suffix == _SUFFIX and _ID.match(p.stem)]
        except OSError:
            return []

    def _path(self, thread_id: str) -> Path:
        if not _ID.match(thread_id):
            raise ThreadError(f"{thread_id!r} is not a thread id")
        return self.directory / f"{thread_id}{_SUFFIX}"

    def _make_folder(self) -> None:
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True, exist_ok=True)
            self.directory.chmod(0o700)


def _redacted(line: dict[str, Any], redactor: Redactor) -> Any:
    """A line redacted for the file; a message keeps what its provider signed only if redaction leaves it
    as it is (`provider_extras.redacted_message`)."""
    if line.get("kind") == "messages":
        return {**line, "messages": [redacted_message(m, redactor.redact_data) for m in line["messages"]]}
    return redactor.redact_data(line)


def _header(thread: Thread) -> dict[str, Any]:
    return {
        "kind": "thread",
        "version": THREAD_FORMAT_VERSION,
        "id": thread.id,
        "name": thread.name,
        "workspace": thread.workspace,
        "created_at": thread.created_at,
        "forked_from": asdict(thread.forked_from) if thread.forked_from else None,
    }


def _check_header(record: dict[str, Any], path: Path) -> None:
    if record.get("kind") != "thread" or not isinstance(record.get("version"), int):
        raise ThreadError(f"{path} is not a saved thread (no header); start a new thread with --new")
    if record["version"] > THREAD_FORMAT_VERSION:
        raise ThreadError(
            f"thread '{record.get('name')}' was saved by a newer architect-nb (format {record['version']}); "
            "upgrade architect-nb to continue it, or start a new thread with --new"
        )
    if not all(isinstance(record.get(key), str) for key in ("id", "name", "workspace")):
        raise ThreadError(f"the header of {path} is damaged; start a new thread with --new")


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
