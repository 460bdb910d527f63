"""Property tests for edit_file: a unique exact match is replaced exactly, anything else is refused, and
hostile, huge and malformed arguments never raise nor change the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.tools.edit_file import EditError, EditFileTool, plan_edit

small_text = st.text(alphabet="ab \t\n", max_size=60)


@settings(max_examples=500, deadline=None)
@given(small_text, st.data(), small_text)
def test_unique_exact_match_is_replaced_exactly(text: str, data: st.DataObject, new: str) -> None:
    if not text:
        return
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    old = text[i:j]
    starts = [k for k in range(len(text)) if text.startswith(old, k)]
    try:
        plan = plan_edit(text, old, new)
    except EditError as exc:
        assert len(starts) > 1 or old == new or "changes nothing" in str(exc)
        return
    assert len(starts) == 1 and old != new
    if j < len(text):  # an edit that reaches the end keeps the final newline (or its absence)
        assert plan.new_text == text[:i] + new + text[j:]
    if plan.new_text and not new.endswith("\n\n"):  # one trailing newline of new_str is dropped, not more
        assert plan.new_text.endswith("\n") == text.endswith("\n")


@settings(max_examples=300, deadline=None)
@given(small_text, small_text, small_text)
def test_any_edit_is_exact_loose_or_refused(text: str, old: str, new: str) -> None:
    try:
        plan = plan_edit(text, old, new)
    except EditError:
        return
    if plan.loose_note:
        # A loose match only ever ignores trailing whitespace and line endings.
        assert text.count(old) == 0
        assert [line.rstrip() for line in text.split("\n")] != [
            line.rstrip() for line in old.split("\n")
        ] or (plan.new_text.strip() == new.strip())
    else:
        assert text.count(old) == 1


HOSTILE = ["", "\x00", "\ud800", "A" * 2_000_000, "\r\n" * 1000, "\u202e", "line\n" * 10_000]
anything = st.one_of(
    st.none(), st.integers(), st.floats(allow_nan=True), st.lists(st.text(max_size=5), max_size=3), st.text()
)
CONTENT = b"alpha\nbeta\r\ngamma  \n\xc3\xa9\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.one_of(st.just("f.txt"), st.just("nope/f.txt"), st.text(max_size=30), anything),
    old_str=st.one_of(st.sampled_from(HOSTILE), st.sampled_from(["alpha", "beta\n", "a"]), anything),
    new_str=st.one_of(st.sampled_from(HOSTILE), anything),
)
def test_hostile_arguments_never_raise_nor_lose_data(
    workspace: Path, path: Any, old_str: Any, new_str: Any
) -> None:
    target = workspace / "f.txt"
    target.write_bytes(CONTENT)
    result = EditFileTool(workspace).execute(path=path, old_str=old_str, new_str=new_str)
    if not result.success:
        assert result.error and len(result.error) < 20_000
        assert target.read_bytes() == CONTENT
    assert sorted(p.name for p in workspace.iterdir()) == ["f.txt"]


@pytest.mark.parametrize("size", [1, 5_000_000])
def test_huge_file_and_replacement(workspace: Path, size: int) -> None:
    target = workspace / "big.txt"
    target.write_text("start\n" + "x = 1\n" * size + "end\n")
    result = EditFileTool(workspace).execute(
        path="big.txt", old_str="start\n", new_str="A" * 3_000_000 + "\n"
    )
    if size == 1:
        assert result.success, result.error
    else:  # 30 MB: over the edit limit, refused up front
        assert not result.success and "limit" in (result.error or "")
