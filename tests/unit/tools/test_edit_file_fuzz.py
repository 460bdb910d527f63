"""Property tests for edit_file: a unique exact match is replaced exactly, anything else is refused, and
hostile, huge and malformed arguments never raise nor change the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.tools.filesystem.edit_file import EditError, EditFileTool, plan_edit

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
    if new.rstrip("\n") and not new.endswith("\n\n"):  # one trailing newline of new_str is dropped, not more
        assert plan.new_text.endswith("\n") == text.endswith("\n")
    else:
        assert plan.new_text in (
            text[:i] + new + text[j:],
            text[:i] + new[:-1] + text[j:],
            text[:i] + new + "\n",
        )


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


CONTENTS = ["a", "b", "c d", "x = 1"]  # none ends another, so a loose match can only start at a line start
line_st = st.tuples(st.sampled_from([*CONTENTS, ""]), st.sampled_from(["", " ", "\t", "  \t"]))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(line_st, min_size=1, max_size=12),
    st.booleans(),
    st.data(),
    st.sampled_from(["Z", "Z\n", "", "y\nz\n"]),
)
def test_loose_match_replaces_exactly_the_unique_block(
    lines: list[tuple[str, str]], crlf: bool, data: st.DataObject, new: str
) -> None:
    eol = "\r\n" if crlf else "\n"
    text = "".join(content + ws + eol for content, ws in lines)
    starts = [k for k, (content, _) in enumerate(lines) if content]
    if not starts:
        return
    i = data.draw(st.sampled_from(starts))
    j = data.draw(st.integers(i + 1, len(lines)))
    block = [content for content, _ in lines[i:j]]
    old = "\n".join(block) + "\n"
    if old in text or old == new:
        return  # the exact path, tested elsewhere
    matches = [k for k in range(len(lines)) if [c for c, _ in lines[k : k + len(block)]] == block]
    try:
        plan = plan_edit(text, old, new)
    except EditError as exc:
        assert (len(matches) > 1 and "occurs" in str(exc)) or "changes nothing" in str(exc)
        return
    assert matches == [i] and plan.loose_note
    expected = (
        "".join(c + w + eol for c, w in lines[:i])
        + new.replace("\n", eol)
        + "".join(c + w + eol for c, w in lines[j:])
    )
    if expected and not expected.endswith("\n"):  # the edit reached the end: the final newline is kept
        expected += eol
    assert plan.new_text == expected


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
