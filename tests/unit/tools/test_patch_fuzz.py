"""Property tests for apply_patch: any correct diff applies exactly; damaged ones never give a wrong result;
hostile, huge and malformed arguments give a clear error and leave the file as it was."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.tools.patch.apply_patch import ApplyPatchTool, PatchError, apply_patch_text

# Lines chosen to look like diff syntax: headers, markers and hunk headers inside a file's content.
LINE_POOL = [
    "a",
    "b",
    "c",
    "",
    " ",
    "-- x",
    "--",
    "- ",
    "++ y",
    "+",
    "--- a/f",
    "+++ b/f",
    "@@ -1 +1 @@",
    "\\ z",
]
lines_st = st.lists(st.sampled_from(LINE_POOL), max_size=25)


def join(lines: list[str], final_newline: bool) -> str:
    text = "\n".join(lines)
    return text + "\n" if lines and final_newline else text


def make_diff(old: str, new: str, context: int) -> str:
    out = []
    for line in difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), "a/f", "b/f", n=context
    ):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(lines_st, st.booleans(), lines_st, st.booleans(), st.integers(0, 3))
def test_any_correct_diff_applies_exactly(
    old_lines: list[str], old_eol: bool, new_lines: list[str], new_eol: bool, context: int
) -> None:
    old, new = join(old_lines, old_eol), join(new_lines, new_eol)
    if old == new or not old:
        return
    assert apply_patch_text(old, make_diff(old, new, context), fallback=False).text == new


@settings(max_examples=300, deadline=None)
@given(lines_st, st.booleans(), lines_st, st.booleans(), st.integers(0, 3))
def test_lf_diff_on_a_crlf_file_keeps_it_crlf(
    old_lines: list[str], old_eol: bool, new_lines: list[str], new_eol: bool, context: int
) -> None:
    old, new = join(old_lines, old_eol), join(new_lines, new_eol)
    if old == new or not old or "\n" not in old:
        return
    crlf_old = old.replace("\n", "\r\n")
    got = apply_patch_text(crlf_old, make_diff(old, new, context), fallback=False).text
    assert got == new.replace("\n", "\r\n")


def wreck(patch: str, data: st.DataObject) -> str:
    def counts(m: re.Match[str]) -> str:
        b = data.draw(st.integers(0, 9), label="old count")
        d = data.draw(st.integers(0, 9), label="new count")
        return f"@@ -{m.group(1)},{b} +{m.group(2)},{d} @@"

    patch = re.sub(r"(?m)^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", counts, patch)
    if data.draw(st.booleans(), label="strip blank context"):
        patch = re.sub(r"(?m)^ $", "", patch)
    return patch


@settings(max_examples=400, deadline=None)
@given(lines_st, st.booleans(), lines_st, st.booleans(), st.integers(1, 3), st.data())
def test_damaged_diff_applies_exactly_or_is_refused(
    old_lines: list[str],
    old_eol: bool,
    new_lines: list[str],
    new_eol: bool,
    context: int,
    data: st.DataObject,
) -> None:
    old, new = join(old_lines, old_eol), join(new_lines, new_eol)
    if old == new or not old:
        return
    patch = wreck(make_diff(old, new, context), data)
    try:
        got = apply_patch_text(old, patch, fallback=False).text
    except PatchError:
        return
    assert got == new


HOSTILE = [
    "",
    "\x00",
    "\ud800",
    "A" * 2_000_000,
    "@@ -1,999999999999999999999 +1 @@\n-line\n",
    "@@ -99999999999 +1 @@\n+x\n",
    "@@ -1," + "9" * 5000 + " +1 @@\n-line\n+x\n",
    "@@ " + "x" * 1_000_000 + "\n-line\n+x\n",
    "--- a/" + "n" * 100_000 + "\n+++ b/x\n@@ -1 +1 @@\n-line\n+x\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
    "--- /dev/null\n+++ ../../etc/passwd\n@@ -0,0 +1 @@\n+root::0:0::/:/bin/sh\n",
    "diff --git a/x b/x\nGIT binary patch\nliteral 0\n",
    "@@\n" * 10_000,
    "@@ -1 +1 @@\n" + "-x\n" * 50_000,
    "*** a\n--- b\n***************\n*** 1 ****\n! x\n--- 1 ----\n! y\n",
    "1c1\n< line\n---\n> other\n",
]
anything = st.one_of(
    st.none(), st.integers(), st.floats(allow_nan=True), st.lists(st.text(max_size=5), max_size=3), st.text()
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.one_of(st.just("f.txt"), st.just("missing/f.txt"), st.text(max_size=30), anything),
    patch=st.one_of(st.sampled_from(HOSTILE), st.text(max_size=300), anything),
    extra=st.dictionaries(st.sampled_from(["path2", "mode", "x"]), st.text(max_size=5), max_size=1),
)
def test_hostile_arguments_never_raise_nor_change_the_file(
    workspace: Path, path: Any, patch: Any, extra: dict[str, Any]
) -> None:
    target = workspace / "f.txt"
    target.write_bytes(b"line\nother\n")
    tool = ApplyPatchTool(workspace)
    result = tool.execute(path=path, patch=patch, **extra)
    if not result.success:
        assert result.error and len(result.error) < 5_000
        assert target.read_bytes() == b"line\nother\n"
    files = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if p.is_file())
    assert all(not name.endswith((".orig", ".rej", ".architect-tmp")) for name in files)
