"""Where apply_patch puts hunks when the file does not make it obvious: a byte-order mark on line 1, context
that repeats, twin blocks under a misleading header. Each case is a small file made here, checked against the
exact bytes expected, or refused with the candidate lines named and the file left as it was."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from architect_nb.tools.patch.apply_patch import ApplyPatchTool, PatchError, apply_patch_text

BOM = b"\xef\xbb\xbf"
needs_gnu = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")


@pytest.fixture
def tool(workspace: Path) -> ApplyPatchTool:
    return ApplyPatchTool(workspace)


def made_diff(tmp: Path, old: bytes, new: bytes, *options: str) -> str:
    """A real diff of two byte strings: `git diff --no-index`, or `diff` if the options start with 'diff'."""
    (tmp / "a").mkdir(exist_ok=True)
    (tmp / "b").mkdir(exist_ok=True)
    (tmp / "a" / "f.py").write_bytes(old)
    (tmp / "b" / "f.py").write_bytes(new)
    if options and options[0] == "diff":
        cmd = [*options, "a/f.py", "b/f.py"]
    else:
        cmd = ["git", "diff", "--no-index", "--no-color", *options, "a/f.py", "b/f.py"]
    return subprocess.run(cmd, cwd=tmp, capture_output=True, check=False).stdout.decode("utf-8")


def lines(*items: str) -> str:
    return "".join(item + "\n" for item in items)


# --------------------------------------------------------------------------- a byte-order mark on line 1

BOM_OLD = BOM + b"import os\nimport sys\n\n\ndef main():\n    print(os.getcwd())\n"
BOM_NEW = BOM + b'"""A tool."""\nimport os\nimport sys\n\n\ndef main():\n    print(os.getcwd())\n'


def test_a_faithful_diff_of_a_bom_file_that_changes_line_one(
    tool: ApplyPatchTool, workspace: Path, tmp_path: Path
) -> None:
    patch = made_diff(tmp_path, BOM_OLD, BOM_NEW)
    assert '+\ufeff"""A tool."""' in patch and "-\ufeffimport os" in patch  # the mark travels in the diff
    f = workspace / "f.py"
    f.write_bytes(BOM_OLD)
    result = tool.execute(path="f.py", patch=patch)
    assert result.success, result.error
    assert f.read_bytes() == BOM_NEW
    assert "\ufeff" not in result.metadata["diff"]  # the mark stays, so it is not shown as a change
    assert '+"""A tool."""\n import os\n' in result.metadata["diff"]


def test_a_bom_file_patched_as_read_without_its_mark(tool: ApplyPatchTool, workspace: Path) -> None:
    """A model reads the file without the mark (read_file drops it) and patches line 1: the mark is kept."""
    f = workspace / "f.py"
    f.write_bytes(BOM_OLD)
    patch = '@@ -1,2 +1,3 @@\n+"""A tool."""\n import os\n import sys\n'
    assert tool.execute(path="f.py", patch=patch).success
    assert f.read_bytes() == BOM_NEW


def test_a_faithful_diff_that_removes_the_mark(tool: ApplyPatchTool, workspace: Path, tmp_path: Path) -> None:
    without = BOM_OLD[len(BOM) :]
    patch = made_diff(tmp_path, BOM_OLD, without)
    f = workspace / "f.py"
    f.write_bytes(BOM_OLD)
    result = tool.execute(path="f.py", patch=patch)
    assert result.success, result.error
    assert f.read_bytes() == without


@needs_gnu
def test_the_gnu_fallback_gets_the_mark_too(tool: ApplyPatchTool, workspace: Path, tmp_path: Path) -> None:
    """A context diff goes to GNU patch, which is handed the file with its mark when the diff carries it."""
    patch = made_diff(tmp_path, BOM_OLD, BOM_NEW, "diff", "-c")
    assert patch.startswith("***") and "\ufeff" in patch
    f = workspace / "f.py"
    f.write_bytes(BOM_OLD)
    result = tool.execute(path="f.py", patch=patch)
    assert result.success and result.metadata["engine"] == "gnu-patch", result.error
    assert f.read_bytes() == BOM_NEW


# --------------------------------------------------------------------------- context that repeats

TAIL = ("    x = load()", "    return x", "")
FILE_WITH_TWIN_TAIL = lines(
    "def first():", *TAIL, "def second():", "    y = 1", "    z = 2", "def third():", *TAIL
)


def test_an_append_at_the_end_whose_context_also_occurs_earlier() -> None:
    """Less context after the change than before: it belongs at the end (GNU patch's and git's rule)."""
    patch = "@@ -6,3 +6,5 @@\n     x = load()\n     return x\n \n+def fourth():\n+    pass\n"
    out = apply_patch_text(FILE_WITH_TWIN_TAIL, patch, fallback=False).text
    assert out == FILE_WITH_TWIN_TAIL + "def fourth():\n    pass\n"


def test_an_insert_at_the_start_whose_context_also_occurs_later() -> None:
    text = lines("import a", "import b", "", "x = 1", "import a", "import b", "", "y = 2")
    patch = "@@ -3,3 +3,4 @@\n+import z\n import a\n import b\n \n"
    assert apply_patch_text(text, patch, fallback=False).text == "import z\n" + text


def test_the_end_rule_only_breaks_ties(tool: ApplyPatchTool, workspace: Path) -> None:
    """Appending context with a header right at the earlier copy: the header wins, as it names that place."""
    patch = "@@ -2,3 +2,4 @@\n     x = load()\n     return x\n \n+# after first\n"
    out = apply_patch_text(FILE_WITH_TWIN_TAIL, patch, fallback=False).text
    assert out == FILE_WITH_TWIN_TAIL.replace("x\n\ndef second", "x\n\n# after first\ndef second")


# --------------------------------------------------------------------------- twin blocks, misleading headers

TWIN = ("    if not items:", "        return None", "    first = items[0]")
FIX_TWIN = "     if not items:\n-        return None\n+        return []\n     first = items[0]\n"
FIX_UNIQUE = "     # unique\n-    value = compute()\n+    value = compute(fast=True)\n     return value\n"


HEAD = ("def head(items):", "    # the first twin", *TWIN, "    return first", "", "")
TAIL_TWIN = ("def tail(items):", "    # the second twin", *TWIN, "    return first")
MIDDLE = ("def middle():", "    # unique", "    value = compute()", "    return value")


def twin_file() -> str:
    """Two identical blocks (lines 3-5 and 17-19) with a unique one between them (lines 11-13)."""
    return lines(*HEAD, *MIDDLE, "", "", *TAIL_TWIN)


def fixed(text: str) -> str:
    """`text` with the first twin and the unique block changed as FIX_TWIN and FIX_UNIQUE say."""
    return text.replace("        return None", "        return []", 1).replace(
        "compute()", "compute(fast=True)"
    )


def test_twins_the_later_hunk_decides_which() -> None:
    """Hunk 1's header is nearer the second twin, but hunk 2 comes before it: only the first twin lets both
    apply (greedily, hunk 1 took the second twin and hunk 2 failed 'before the end of the previous hunk')."""
    patch = "@@ -12,3 +12,3 @@\n" + FIX_TWIN + "@@ -20,3 +20,3 @@\n" + FIX_UNIQUE
    out = apply_patch_text(twin_file(), patch, fallback=False)
    assert out.text == fixed(twin_file())
    assert "hunk 1 applied at line 3 (offset -9 lines)." in out.notes


def test_twins_equally_near_the_header_are_told_apart_by_a_consistent_offset() -> None:
    """Hunk 1's header is 4 lines from both twins, and hunk 2's only place (after both) 4 lines above its
    header: of the twins, only the first lets both hunks apply at one offset (greedily, it was refused)."""
    text = lines(*HEAD, *TAIL_TWIN, "", "", *MIDDLE)
    patch = "@@ -7,3 +7,3 @@\n" + FIX_TWIN + "@@ -22,3 +22,3 @@\n" + FIX_UNIQUE
    out = apply_patch_text(text, patch, fallback=False)
    assert out.text == fixed(text)
    assert out.notes == ("hunk 1 applied at line 3 (offset -4 lines).",)


def test_a_moved_hunk_that_fits_two_places_is_refused_with_both_named(
    tool: ApplyPatchTool, workspace: Path
) -> None:
    f = workspace / "twins.py"
    f.write_text(twin_file())
    before = f.read_bytes()
    result = tool.execute(path="twins.py", patch="@@ -11,3 +11,3 @@\n" + FIX_TWIN)
    assert not result.success
    error = result.error or ""
    assert error.startswith("Hunk 1 of 1 (@@ -11,3 +11,3 @@) fits 'twins.py' at lines 3 and 17,"), error
    assert "which names line 11, does not tell which is meant" in error
    assert "Fix the header's line numbers" in error and "the file is unchanged" in error
    assert f.read_bytes() == before
    assert [p.name for p in workspace.iterdir()] == ["twins.py"]  # GNU patch did not guess either


def test_a_header_twenty_lines_off_is_not_taken_to_a_nearer_twin() -> None:
    """The true place (line 1) is 20 lines from the header and a twin (line 27) only 6: both fit, so it is
    refused, never written at the twin. With a second hunk off by as much, the true place is taken."""
    pad_a = [f"a_{i} = {i}" for i in range(23)]
    pad_b = [f"b_{i} = {i}" for i in range(30)]
    text = lines(*TWIN, *pad_a, *TWIN, *pad_b, "tail = 0")
    change = FIX_TWIN
    with pytest.raises(
        PatchError, match=r"fits 'the file' at lines 1 and 27, and its header, which names line 21"
    ):
        apply_patch_text(text, "@@ -21,3 +21,3 @@\n" + change, fallback=False)
    second = "@@ -79,2 +79,2 @@\n b_29 = 29\n-tail = 0\n+tail = 1\n"
    out = apply_patch_text(text, "@@ -21,3 +21,3 @@\n" + change + second, fallback=False).text
    assert out == lines("    if not items:", "        return []", TWIN[2], *pad_a, *TWIN, *pad_b, "tail = 1")


def test_git_heading_names_the_place_when_a_twin_sits_at_the_header() -> None:
    """The header is 12 lines off and lands exactly on a twin; git's heading (the class line above the hunk)
    names the true place, so that is taken."""
    text = lines(
        "class Budget:",
        "    limit: float = Field(",
        "        1.0,",
        "    )",
        "",
        "",
        "class Server:",
        "    command: str",
        "    args: list[str]",
        "    timeout: float = Field(",
        "        60.0,",
        "    )",
        "",
        "",
        "class Other:",
        "    pass",
    )
    patch = "@@ -4,2 +4,3 @@ class Server:\n     )\n+    restarts: int = 1\n \n"
    out = apply_patch_text(text, patch, fallback=False).text
    assert out == text.replace("        60.0,\n    )\n", "        60.0,\n    )\n    restarts: int = 1\n")
    plain = "@@ -4,2 +4,3 @@\n     )\n+    restarts: int = 1\n \n"  # no heading: the header names line 4
    assert apply_patch_text(text, plain, fallback=False).text == text.replace(
        "        1.0,\n    )\n", "        1.0,\n    )\n    restarts: int = 1\n"
    )


def test_an_insertion_without_context_between_hunks_that_moved_differently_is_refused() -> None:
    text = lines(*(f"line {i}" for i in range(1, 31)))
    moved = "new 0\n" + text.replace("line 20\n", "line 20\nextra\n")  # +1 above hunk 1, +1 more after 20
    patch = "@@ -5 +5 @@\n-line 5\n+five\n@@ -15,0 +16 @@\n+inserted\n@@ -25 +26 @@\n-line 25\n+twenty-five\n"
    assert apply_patch_text(text, patch, fallback=False).text == text.replace("line 5\n", "five\n").replace(
        "line 15\n", "line 15\ninserted\n"
    ).replace("line 25\n", "twenty-five\n")
    with pytest.raises(
        PatchError, match=r"only adds lines.*moved by different amounts \(\+1 and \+2 lines\)"
    ):
        apply_patch_text(moved, patch, fallback=False)


def test_a_last_line_without_newline_can_only_be_the_end() -> None:
    text = "x = 1\nend\nx = 1\nend"
    patch = (
        "@@ -1,2 +1,2 @@\n x = 1\n-end\n\\ No newline at end of file\n+done\n\\ No newline at end of file\n"
    )
    assert apply_patch_text(text, patch, fallback=False).text == "x = 1\nend\nx = 1\ndone"


def test_the_result_diff_reapplies_to_the_same_bytes(tool: ApplyPatchTool, workspace: Path) -> None:
    """The shown diff comes from the hunks' placement, not a second difflib pass; it must say the same."""
    f = workspace / "twins.py"
    f.write_text(twin_file())
    patch = (
        "@@ -12,3 +12,3 @@\n"
        + FIX_TWIN
        + "@@ -20,3 +20,4 @@\n     # unique\n-    value = compute()\n"
        + "+    value = compute()\n+    value += 1\n     return value\n"
    )
    result = tool.execute(path="twins.py", patch=patch)
    assert result.success, result.error
    diff = result.metadata["diff"]
    assert "-    value = compute()" not in diff  # removed and added back unchanged: shown as context
    assert apply_patch_text(twin_file(), diff, fallback=False).text == f.read_text()
    assert "(+2 -1 lines)" in result.output
