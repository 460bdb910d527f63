"""Parsing through `architect_nb.python_syntax`: what `ast.parse` gives, and a retry of CPython 3.11's false
"recursion depth mismatch" only."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from architect_nb import python_syntax
from architect_nb.python_syntax import parse_expression, parse_module


def test_a_module_and_an_expression_parse_as_ast_parse_parses_them() -> None:
    assert ast.dump(parse_module("x = 1\ny = x + 2")) == ast.dump(ast.parse("x = 1\ny = x + 2"))
    assert isinstance(parse_expression("a.b['c']").body, ast.Subscript)
    with pytest.raises(SyntaxError):
        parse_module("def (")
    with pytest.raises(SyntaxError):
        parse_expression("x = 1")
    with pytest.raises((SyntaxError, ValueError)):  # which one depends on the Python version
        parse_module("x = '\0'")


def flaky_parse(failures: list[str]) -> Any:
    real = ast.parse

    def parse(*args: Any, **kwargs: Any) -> ast.AST:
        if failures:
            raise SystemError(failures.pop(0))
        return real(*args, **kwargs)

    return parse


def test_the_false_depth_mismatch_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    failures = ["AST constructor recursion depth mismatch (before=141, after=159)"] * 2
    monkeypatch.setattr(python_syntax.ast, "parse", flaky_parse(failures))
    assert isinstance(parse_module("x = 1").body[0], ast.Assign)
    assert failures == []


def test_a_lasting_mismatch_and_other_system_errors_are_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    lasting = ["AST constructor recursion depth mismatch"] * 3
    monkeypatch.setattr(python_syntax.ast, "parse", flaky_parse(lasting))
    with pytest.raises(SystemError, match="mismatch"):
        parse_module("x = 1")
    other = ["something else broke"]
    monkeypatch.setattr(python_syntax.ast, "parse", flaky_parse(other))
    with pytest.raises(SystemError, match="something else"):
        parse_expression("x")
    assert other == []  # raised at once, not retried
