"""The task of a "fix this error" `%%architect` cell, as `%architect fix` and the extension's button write it:
it names the failing cell by its execution count and says what it raised, so the run's references find it."""

from __future__ import annotations

import sys
from typing import Any

from architect_nb.notebook.context.execution_log import current_log

__all__ = ["fix_task"]


def fix_task(shell: Any) -> str | None:
    """ "Fix the error of [7] (KeyError: 'amont')." for the kernel's last failed cell; None if none failed."""
    log = current_log()
    failed = [entry for entry in (log.snapshot().values() if log is not None else ()) if entry.error]
    if failed:
        last = failed[-1]
        error = last.error or {}
        what = f"{error.get('ename', 'Error')}: {str(error.get('evalue', ''))[:120]}".rstrip(": ")
        return f"Fix the error of [{last.count}] ({what})."
    value = getattr(sys, "last_value", None)
    if isinstance(value, BaseException):
        return f"Fix the last error ({type(value).__name__}: {str(value)[:120]})."
    return None
