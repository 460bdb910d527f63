"""Python source to an AST, safe from a CPython 3.11 bug when two threads parse at once.

Before 3.12, `ast.parse` keeps its depth count in state shared by every thread, and a thread switch while the
AST objects are built (a garbage collection can run Python code) can make it fail with a false
`SystemError: AST constructor recursion depth mismatch` (python/cpython#106905). The kernel parses in tool
threads while other threads run, so every parse here holds one lock and is retried on that error.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()
_ATTEMPTS = 3


def parse_module(source: str, filename: str = "<unknown>") -> ast.Module:
    """The module `source` is; raises SyntaxError or ValueError as `ast.parse` does."""
    tree = _parse(source, filename, "exec")
    assert isinstance(tree, ast.Module)
    return tree


def parse_expression(source: str) -> ast.Expression:
    """The expression `source` is; raises SyntaxError when it is not one."""
    tree = _parse(source, "<unknown>", "eval")
    assert isinstance(tree, ast.Expression)
    return tree


def _parse(source: str, filename: str, mode: str) -> ast.AST:
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            with _LOCK:
                return ast.parse(source, filename=filename, mode=mode)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == _ATTEMPTS:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
