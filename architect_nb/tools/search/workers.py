"""Worker processes that run `scan.scan` so a search can be stopped at its time bound.

Python's `re` cannot be interrupted, so a pathological pattern would hang a thread forever. Here each search
runs in a small worker process (`python -I -S scan.py`, about 15 ms to start, then reused). When a search
overruns, its worker is killed and the results received so far are kept. Where no worker can be started
(no usable `sys.executable`), the scan runs in process and checks the time between files only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from architect_nb.tools.search import scan as scan_module

__all__ = ["ScanResult", "run_scan", "run_scans", "shutdown_workers"]

_IDLE_LIMIT = 2
_idle: list[_Worker] = []
_lock = threading.Lock()


@dataclass(slots=True)
class ScanResult:
    """What a scan found: events in file order, how many files it finished, and whether time cut it."""

    events: list[scan_module.Event] = field(default_factory=list)
    files_done: int = 0
    timed_out: bool = False
    error: str | None = None


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", scan_module.__file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, kill: bool = False) -> None:
        proc = self.proc
        if kill:
            with contextlib.suppress(OSError):
                proc.kill()
        with contextlib.suppress(OSError):
            if proc.stdin:
                proc.stdin.close()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def _acquire() -> _Worker | None:
    with _lock:
        while _idle:
            worker = _idle.pop()
            if worker.alive():
                return worker
            worker.close()
    return _spawn()


def _spawn() -> _Worker | None:
    if not sys.executable or not os.path.exists(sys.executable):
        return None
    try:
        return _Worker()
    except OSError:
        return None


def _release(worker: _Worker) -> None:
    with _lock:
        if worker.alive() and len(_idle) < _IDLE_LIMIT:
            _idle.append(worker)
            return
    worker.close()


def shutdown_workers() -> None:
    """Stop the idle workers (also done at interpreter exit)."""
    with _lock:
        workers, _idle[:] = list(_idle), []
    for worker in workers:
        worker.close()


atexit.register(shutdown_workers)


def run_scan(request: dict[str, Any], timeout: float, in_process: bool = False) -> ScanResult:
    """Run `scan.scan(request)` for at most `timeout` seconds and collect its events."""
    deadline = time.monotonic() + min(timeout, threading.TIMEOUT_MAX / 2, 86_400.0)
    if not request["files"]:
        return ScanResult()
    worker = None if in_process else _acquire()
    if worker is None:
        return _scan_in_process(request, deadline)
    result = _run_in(worker, request, deadline)
    if result.error == _NOT_SENT:  # an idle worker that died since: one fresh try
        fresh = _spawn()
        result = _run_in(fresh, request, deadline) if fresh else _scan_in_process(request, deadline)
    return result


_NOT_SENT = "the request could not be sent"


def _run_in(worker: _Worker, request: dict[str, Any], deadline: float) -> ScanResult:
    result = ScanResult()
    inbox: queue.Queue[tuple[Any, ...] | None] = queue.Queue()
    reader = threading.Thread(target=_read_messages, args=(worker, inbox), daemon=True)
    reader.start()
    healthy = False
    try:
        try:
            assert worker.proc.stdin is not None
            pickle.dump(request, worker.proc.stdin, pickle.HIGHEST_PROTOCOL)
            worker.proc.stdin.flush()
        except OSError:
            result.error = _NOT_SENT
            return result
        while True:
            remaining = deadline - time.monotonic()
            try:
                message = inbox.get(timeout=max(remaining, 0.0)) if remaining > 0 else inbox.get_nowait()
            except queue.Empty:
                result.timed_out = result.files_done < len(request["files"])
                break
            if message is None:
                result.error = "the search worker stopped unexpectedly"
                break
            if message[0] == "batch":
                result.events.extend(message[1])
                result.files_done = message[2]
            elif message[0] == "done":
                result.files_done = message[1]
                healthy = True
                break
            else:
                result.error = str(message[1])
                healthy = True
                break
    except (OSError, pickle.PickleError) as exc:
        result.error = f"the search worker failed ({exc})"
    finally:
        if healthy:
            reader.join()
            _release(worker)
        else:
            worker.close(kill=True)
            reader.join()
    return result


def run_scans(requests: list[dict[str, Any]], timeout: float, in_process: bool = False) -> ScanResult:
    """`run_scan` for each request at once, one thread (and worker) each; events merged in file order."""
    if len(requests) == 1:
        return run_scan(requests[0], timeout, in_process)
    results: list[ScanResult] = [ScanResult() for _ in requests]

    def one(i: int) -> None:
        results[i] = run_scan(requests[i], timeout, in_process)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(1, len(requests))]
    for thread in threads:
        thread.start()
    one(0)
    for thread in threads:
        thread.join()
    merged = ScanResult(
        events=sorted((event for r in results for event in r.events), key=lambda event: event[1]),
        files_done=sum(r.files_done for r in results),
        timed_out=any(r.timed_out for r in results),
        error=next((r.error for r in results if r.error), None),
    )
    return merged


def _read_messages(worker: _Worker, inbox: queue.Queue[tuple[Any, ...] | None]) -> None:
    stdout = worker.proc.stdout
    assert stdout is not None
    try:
        while True:
            message = pickle.load(stdout)  # noqa: S301 - our own worker
            inbox.put(message)
            if message[0] in ("done", "error"):
                return
    except Exception:  # EOF or a torn message after a kill
        inbox.put(None)


def _scan_in_process(request: dict[str, Any], deadline: float) -> ScanResult:
    result = ScanResult()
    try:
        for position, event in scan_module.scan(request):
            result.files_done = position + 1
            if event is not None:
                result.events.append(event)
            if time.monotonic() > deadline:
                result.timed_out = result.files_done < len(request["files"])
                break
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    return result
