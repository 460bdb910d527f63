"""`Outbox`: what a run's worker thread sends the editor, in order, over the connection's event loop.

The agent runs in a worker thread; the connection lives on the asyncio loop. Updates and permission
questions go through one queue that one task empties, so the editor sees a tool call before the question
about it, and the question before the call's result. A question is sent and then left to its own task: a
client that never answers can hold up only its own run (which a cancel ends), never the queue.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Any

from architect_nb.log import get_logger

__all__ = ["Outbox"]

log = get_logger(__name__)

Send = Callable[[Any], Awaitable[None]]
Ask = Callable[[], Awaitable[Any]]


class Outbox:
    """Session updates and questions from any thread, sent in order by `send` on `loop`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, send: Send) -> None:
        self._loop = loop
        self._send = send
        self._queue: asyncio.Queue[tuple[Any, concurrent.futures.Future[Any] | None]] = asyncio.Queue()
        self._task = loop.create_task(self._drain())
        self._asking: set[asyncio.Task[Any]] = set()

    def post(self, update: Any) -> None:
        """Send `update` after everything posted before it. Thread-safe; never blocks."""
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (update, None))

    def ask(self, question: Ask) -> concurrent.futures.Future[Any]:
        """Send `question()` (a request) after everything posted before it; its answer fills the future."""
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (question, answer))
        return answer

    async def flush(self) -> None:
        """Wait until everything posted so far has been sent."""
        await self._queue.join()

    def close(self) -> None:
        self._task.cancel()
        for task in self._asking:
            task.cancel()

    async def _drain(self) -> None:
        while True:
            item, answer = await self._queue.get()
            try:
                if answer is None:
                    await self._send(item)
                else:
                    task = asyncio.ensure_future(self._answer(item, answer))
                    self._asking.add(task)
                    task.add_done_callback(self._asking.discard)
            except Exception:  # a closed pipe or a client error: the run goes on, the log says so
                log.warning("acp_update_not_sent", exc_info=True)
            finally:
                self._queue.task_done()

    @staticmethod
    async def _answer(question: Ask, answer: concurrent.futures.Future[Any]) -> None:
        try:
            result = await question()
        except BaseException as exc:  # the waiting worker hears of it as a denial
            if not answer.done():
                answer.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
            if not isinstance(exc, Exception):
                raise
            return
        if not answer.done():
            answer.set_result(result)
