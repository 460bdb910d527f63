from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from architect_nb.tools.base import BaseTool, ToolResult


class NumArgs(BaseModel):
    n: int


class Crashy(BaseTool):
    name = "crashy"
    description = "Divides by n."
    args_model = NumArgs

    def execute(self, **kwargs: Any) -> ToolResult:
        args = NumArgs.model_validate(kwargs)
        return ToolResult.ok(str(10 // args.n))


class Sloppy(BaseTool):
    name = "sloppy"
    description = "Returns the wrong type."
    args_model = NumArgs

    def execute(self, **kwargs: Any) -> ToolResult:
        return "oops"  # type: ignore[return-value]


def test_base_tool_is_abstract() -> None:
    with pytest.raises(TypeError):
        BaseTool()  # type: ignore[abstract]


def test_execute_success() -> None:
    assert Crashy().execute(n=2) == ToolResult(success=True, output="5")


def test_unexpected_exception_becomes_a_result() -> None:
    result = Crashy().execute(n=0)
    assert not result.success
    assert "crashy failed unexpectedly (ZeroDivisionError" in (result.error or "")


def test_validation_errors_become_a_readable_result() -> None:
    result = Crashy().execute(n="many")
    assert not result.success
    assert result.error is not None
    assert result.error.startswith("Invalid arguments for crashy: n: Input should be a valid integer")
    assert "retry" in result.error


def test_missing_and_positional_arguments() -> None:
    assert "n: Field required" in (Crashy().execute().error or "")
    result = Crashy().execute(1)  # type: ignore[call-arg]
    assert not result.success and "Invalid arguments" in (result.error or "")


def test_wrong_return_type_is_reported() -> None:
    result = Sloppy().execute(n=1)
    assert not result.success and "instead of a ToolResult" in (result.error or "")


def test_validate_args_raises_pydantic_error() -> None:
    with pytest.raises(ValidationError):
        Crashy().validate_args({"n": "x"})
    assert Crashy().validate_args({"n": "3"}) == NumArgs(n=3)


def test_to_model_text() -> None:
    assert ToolResult.ok("fine").to_model_text() == "fine"
    assert ToolResult.fail("bad thing.").to_model_text() == "Error: bad thing."
    assert ToolResult.fail("bad.", output="partial").to_model_text() == "Error: bad.\npartial"


def test_subclass_of_subclass_stays_guarded() -> None:
    class Sub(Crashy):
        def execute(self, **kwargs: Any) -> ToolResult:
            raise RuntimeError("boom")

    assert Sub().execute(n=1).error == "crashy failed unexpectedly (RuntimeError: boom). " + (
        "This is a bug in the tool; try another approach."
    )
