"""apply_patch: the diff formats it reads, the damage it survives, and every error it gives."""

from __future__ import annotations

import codecs
import shutil
import time
from pathlib import Path

import pytest

from architect_nb.tools.patch.apply_patch import ApplyPatchTool, PatchError, apply_patch_text
from architect_nb.tools.patch.gnu import GnuPatchError, gnu_patch
from architect_nb.tools.patch.parse import PatchParseError, parse_patch
from architect_nb.tools.registry import ToolRegistry

TEXT = "".join(f"line {i}\n" for i in range(1, 31))
needs_gnu = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")


@pytest.fixture
def tool(workspace: Path) -> ApplyPatchTool:
    return ApplyPatchTool(workspace)


def put(workspace: Path, name: str, data: bytes | str) -> Path:
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def apply(text: str | None, patch: str) -> str:
    return apply_patch_text(text, patch, fallback=False).text


def test_registered_sensitive_and_described(registry: ToolRegistry) -> None:
    tool = registry.get("apply_patch")
    assert isinstance(tool, ApplyPatchTool)
    assert tool.sensitive and tool.mutates_files
    params = tool.get_schema()["function"]["parameters"]
    assert set(params["required"]) == {"path", "patch"}
    assert all(p.get("description") for p in params["properties"].values())


GIT_PATCH = """diff --git a/src/x.py b/src/x.py
old mode 100644
new mode 100755
index 3b18e51..a2c4f0d 100644
--- a/src/x.py
+++ b/src/x.py
@@ -2,3 +2,3 @@ header text
 line 2
-line 3
+LINE THREE
 line 4
@@ -20,4 +20,5 @@ def f():
 line 20
 line 21
+inserted
 line 22
 line 23
"""


def test_git_diff_with_index_mode_lines_and_several_hunks(tool: ApplyPatchTool, workspace: Path) -> None:
    f = put(workspace, "x.py", TEXT)
    result = tool.execute(path="x.py", patch=GIT_PATCH)
    assert result.success, result.error
    expected = TEXT.replace("line 3\n", "LINE THREE\n").replace("line 22\n", "inserted\nline 22\n")
    assert f.read_text() == expected
    assert "2 hunks applied (+2 -1 lines)" in result.output
    assert result.metadata["engine"] == "builtin" and "+LINE THREE" in result.metadata["diff"]


def test_header_names_are_ignored_and_no_other_file_is_touched(tool: ApplyPatchTool, workspace: Path) -> None:
    other = put(workspace, "src/x.py", TEXT)
    f = put(workspace, "mine.py", TEXT)
    assert tool.execute(path="mine.py", patch=GIT_PATCH).success
    assert other.read_text() == TEXT and f.read_text() != TEXT


def test_offset_search_finds_moved_context_and_says_so() -> None:
    out = apply_patch_text("new top\n" * 7 + TEXT, GIT_PATCH, fallback=False)
    assert out.text == "new top\n" * 7 + apply(TEXT, GIT_PATCH)
    assert "hunk 1 applied at line 9 (offset +7 lines)." in out.notes
    assert not any("hunk 2 applied" in n for n in out.notes)  # the offset carries over to later hunks


def test_wrong_counts_are_recounted_from_the_body() -> None:
    patch = "@@ -2,9 +2,1 @@\n line 2\n-line 3\n+LINE THREE\n line 4\n@@ -20 +20 @@\n line 20\n+x\n line 21\n"
    out = apply_patch_text(TEXT, patch, fallback=False)
    assert out.text == TEXT.replace("line 3\n", "LINE THREE\n").replace("line 20\n", "line 20\nx\n")
    assert any("header counts -9 +1 did not match its body (-3 +3); recounted" in n for n in out.notes)


def test_too_small_counts_take_the_rest_of_the_body_across_blank_lines() -> None:
    text = "a\n\nb\nc\n"
    assert apply(text, "@@ -1,1 +1,1 @@\n a\n\n-b\n+B\n c\n") == "a\n\nB\nc\n"


def test_blank_context_lines_without_their_space() -> None:
    text = "def f():\n    pass\n\n\ndef g():\n    pass\n"
    patch = "@@ -2,5 +2,5 @@\n     pass\n\n\n-def g():\n+def h():\n     pass\n"
    assert apply(text, patch) == text.replace("def g", "def h")


def test_removed_lines_starting_with_dashes_are_not_headers() -> None:
    text = "select 1;\n-- old comment\n--- banner\n-- \nselect 2;\n"
    patch = (
        "--- a/q.sql\n+++ b/q.sql\n@@ -1,5 +1,4 @@\n select 1;\n--- old comment\n---- banner\n+++ new\n"
        "--- \n select 2;\n"
    )
    assert apply(text, patch) == "select 1;\n++ new\nselect 2;\n"


def test_removed_dash_line_followed_by_added_plus_line_inside_the_counts() -> None:
    text = "x\n-- a\ny\n"
    patch = "@@ -1,3 +1,3 @@\n x\n--- a\n+++ b\n y\n"
    assert apply(text, patch) == "x\n++ b\ny\n"


def test_no_newline_at_end_of_file_both_ways() -> None:
    gained = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    assert apply("a\nb", gained) == "a\nb\n"
    lost = "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"
    assert apply("a\nb\n", lost) == "a\nc"
    appended = "@@ -1,2 +1,3 @@\n a\n b\n+c\n"  # a model's patch after a last line without newline
    assert apply("a\nb", appended) == "a\nb\nc\n"


def test_crlf_file_with_lf_patch_stays_crlf() -> None:
    crlf = TEXT.replace("\n", "\r\n")
    assert apply(crlf, GIT_PATCH) == apply(TEXT, GIT_PATCH).replace("\n", "\r\n")


def test_patch_sent_with_crlf_throughout_applies_to_an_lf_file() -> None:
    assert apply(TEXT, GIT_PATCH.replace("\n", "\r\n")) == apply(TEXT, GIT_PATCH)


def test_faithful_diff_of_mixed_endings_is_followed_exactly() -> None:
    text = "a\r\nb\nc\r\n"
    patch = "--- a/m\n+++ b/m\n@@ -1,3 +1,4 @@\n a\r\n b\n+lf line\n+crlf line\r\n c\r\n"
    assert apply(text, patch) == "a\r\nb\nlf line\ncrlf line\r\nc\r\n"


def test_trailing_whitespace_differences_match_loosely() -> None:
    out = apply_patch_text("a  \nb\t\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", fallback=False)
    assert out.text == "a  \nB\nc\n"
    assert any("trailing whitespace" in n for n in out.notes)


def test_bare_hunk_headers_are_placed_by_context_when_unique() -> None:
    assert apply(TEXT, "@@\n line 5\n-line 6\n+six\n") == TEXT.replace("line 6\n", "six\n")
    with pytest.raises(PatchError, match=r"no line numbers and its lines occur 2 times"):
        apply("x\ny\nx\ny\n", "@@ @@\n x\n-y\n+z\n")


def test_context_line_without_its_space_is_reported_not_half_applied() -> None:
    patch = "@@ -1,3 +1,3 @@\n line 1\nline 2\n-line 3\n+three\n@@ -9 +9 @@\n-line 9\n+nine\n"
    with pytest.raises(
        PatchError, match=r"Line 3 of the patch, 'line 2', interrupts hunk 1 .* leading space"
    ):
        apply(TEXT, patch)


def test_format_patch_signature_is_not_a_removed_line() -> None:
    patch = "@@ -1,2 +1,2 @@\n line 1\n-line 2\n+two\n-- \n2.39.5\n\n"
    assert apply(TEXT, patch) == TEXT.replace("line 2\n", "two\n")


def test_failing_hunk_leaves_the_file_untouched_and_shows_expected_vs_actual(
    tool: ApplyPatchTool, workspace: Path
) -> None:
    f = put(workspace, "x.py", TEXT.replace("line 21\n", "line twenty-one\n"))
    before = f.read_bytes()
    result = tool.execute(path="x.py", patch=GIT_PATCH)
    assert not result.success
    error = result.error or ""
    assert error.startswith("Hunk 2 of 2 (@@ -20,4 +20,5 @@ def f():) does not apply to 'x.py'")
    assert "No hunk was applied; the file is unchanged." in error
    assert "The hunk expects:" in error and "21 |  line 21" in error
    assert "The file has, at lines 20-23:" in error and "21 |  line twenty-one" in error
    assert "First difference, line 21: expected 'line 21', found 'line twenty-one'." in error
    assert f.read_bytes() == before


def test_failure_mentions_a_different_file_named_in_the_header(tool: ApplyPatchTool, workspace: Path) -> None:
    put(workspace, "other.py", "nothing alike\n")
    result = tool.execute(path="other.py", patch=GIT_PATCH)
    assert "The patch's header names 'src/x.py', but it is applied to 'other.py'" in (result.error or "")
    put(workspace, "src/x.py", "nothing alike\n")
    result = tool.execute(path="src/x.py", patch=GIT_PATCH)
    assert "header names" not in (result.error or "")


def test_already_applied_patch_is_recognised() -> None:
    with pytest.raises(PatchError, match="may have been applied already"):
        apply(apply(TEXT, GIT_PATCH), GIT_PATCH)


def test_near_equal_offset_candidates_are_refused() -> None:
    text = "x\ny\nz\n" + "pad\n" * 10 + "x\ny\nz\n"
    with pytest.raises(
        PatchError, match=r"fits 'the file' at lines 1 and 14, and its header, which names line 8"
    ):
        apply(text, "@@ -8,3 +8,3 @@\n x\n-y\n+Y\n z\n")
    # One line off, but the other copy is only 12 lines away: a header that far off is possible, so refused.
    with pytest.raises(PatchError, match=r"fits 'the file' at lines 1 and 14"):
        apply(text, "@@ -2,3 +2,3 @@\n x\n-y\n+Y\n z\n")
    assert apply(text, "@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n") == text.replace("y", "Y", 1)  # exactly there
    far = "x\ny\nz\n" + "pad\n" * 30 + "x\ny\nz\n"  # the other copy 30 lines away: too far to be meant
    assert apply(far, "@@ -3,3 +3,3 @@\n x\n-y\n+Y\n z\n") == far.replace("y", "Y", 1)


def test_hunks_out_of_order_are_refused() -> None:
    patch = "@@ -20,2 +20,2 @@\n line 20\n-line 21\n+x\n@@ -2,2 +2,2 @@\n line 2\n-line 3\n+y\n"
    with pytest.raises(PatchError, match="before the end of the previous hunk"):
        apply(TEXT, patch)


def test_insertion_past_the_end_is_refused() -> None:
    with pytest.raises(PatchError, match="inserts after line 90, but the file has only 30 lines"):
        apply(TEXT, "@@ -90,0 +91,1 @@\n+tail\n")


def test_multi_file_patch_is_refused_and_nothing_is_touched(tool: ApplyPatchTool, workspace: Path) -> None:
    a = put(workspace, "a.py", TEXT)
    b = put(workspace, "b.py", TEXT)
    patch = (
        "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n line 1\n-line 2\n+two\n"
        "--- a/b.py\n+++ b/b.py\n@@ -1,2 +1,2 @@\n line 1\n-line 2\n+two\n"
    )
    result = tool.execute(path="a.py", patch=patch)
    assert not result.success
    assert "holds diffs for 2 files (a.py, b.py)" in (result.error or "")
    assert "one apply_patch call per file" in (result.error or "")
    assert a.read_text() == TEXT and b.read_text() == TEXT


def test_new_file_patch_creates_the_path(tool: ApplyPatchTool, workspace: Path) -> None:
    patch = (
        "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    )
    result = tool.execute(path="pkg/sub/new.py", patch=patch)
    assert result.success, result.error
    assert (workspace / "pkg/sub/new.py").read_text() == "a\nb\n"
    assert result.output.startswith("Created pkg/sub/new.py") and result.metadata["created"] is True
    again = tool.execute(path="pkg/sub/new.py", patch=patch)
    assert not again.success and "already exists" in (again.error or "")


def test_patch_for_a_missing_file_is_refused(tool: ApplyPatchTool, workspace: Path) -> None:
    result = tool.execute(path="nope.py", patch=GIT_PATCH)
    assert not result.success and "'nope.py' does not exist" in (result.error or "")
    assert not (workspace / "nope.py").exists()


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("", "The patch is empty"),
        ("just some prose\n", "No hunk found"),
        ("--- a/x\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-line 1\n-line 2\n", "use delete_file"),
        ("diff --git a/x b/x\nindex 1..2\nBinary files a/x and b/x differ\n", "binary diff"),
        ("diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n", "No hunk found"),
        ("diff --git a/x b/x\nold mode 100644\nnew mode 100755\n@@ -1 +1 @@\n line 1\n", "makes no change"),
        ("@@ -1,2 +1,2 @@\n", "has no lines after its header"),
    ],
)
def test_unusable_patches(tool: ApplyPatchTool, workspace: Path, patch: str, message: str) -> None:
    f = put(workspace, "x.py", TEXT)
    result = tool.execute(path="x.py", patch=patch)
    assert not result.success
    assert message in (result.error or "")
    assert f.read_text() == TEXT


def test_parser_reports_sections_and_names() -> None:
    (section,) = parse_patch(GIT_PATCH)
    assert section.shown_name == "src/x.py"
    assert [h.counts for h in section.hunks] == [(3, 3), (4, 5)]
    assert "old mode 100644" in section.extended
    with pytest.raises(PatchParseError):
        parse_patch("nothing here")


@pytest.mark.parametrize(
    ("bom", "encoding"), [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le")]
)
def test_encoding_and_bom_are_kept(tool: ApplyPatchTool, workspace: Path, bom: bytes, encoding: str) -> None:
    f = put(workspace, "x.py", bom + TEXT.encode(encoding))
    assert tool.execute(path="x.py", patch=GIT_PATCH).success
    assert f.read_bytes() == bom + apply(TEXT, GIT_PATCH).encode(encoding)


def test_preview_does_not_write(tool: ApplyPatchTool, workspace: Path) -> None:
    f = put(workspace, "x.py", TEXT)
    diff = tool.preview(path="x.py", patch=GIT_PATCH)
    assert diff is not None and "+LINE THREE" in diff
    assert f.read_text() == TEXT
    with pytest.raises(PatchError):
        tool.preview(path="x.py", patch="@@ -1 +1 @@\n-nope\n+yes\n")


def test_large_file_with_offset_stays_linear() -> None:
    text = "".join(f"row {i}\n" for i in range(200_000))
    patch = "@@ -150000,3 +150000,3 @@\n row 150100\n-row 150101\n+changed\n row 150102\n"
    start = time.perf_counter()
    out = apply(text, patch)
    assert out == text.replace("row 150101\n", "changed\n")
    # Milliseconds normally; the bound only catches a quadratic search (minutes), not load on a busy machine.
    assert time.perf_counter() - start < 10.0


# --------------------------------------------------------------------------- the GNU patch fallback

CONTEXT_DIFF = """*** a/x.py
--- b/x.py
***************
*** 2,4 ****
  line 2
! line 3
  line 4
--- 2,4 ----
  line 2
! LINE THREE
  line 4
"""


@needs_gnu
def test_gnu_fallback_reads_context_diffs_and_leaves_nothing_behind(
    tool: ApplyPatchTool, workspace: Path
) -> None:
    f = put(workspace, "x.py", TEXT)
    result = tool.execute(path="x.py", patch=CONTEXT_DIFF)
    assert result.success, result.error
    assert result.metadata["engine"] == "gnu-patch" and "GNU patch" in result.output
    assert f.read_text() == TEXT.replace("line 3\n", "LINE THREE\n")
    assert [p.name for p in workspace.iterdir()] == ["x.py"]  # no .orig, no .rej


@needs_gnu
def test_gnu_fallback_refuses_multi_file_context_diffs(tool: ApplyPatchTool, workspace: Path) -> None:
    f = put(workspace, "x.py", TEXT)
    result = tool.execute(path="x.py", patch=CONTEXT_DIFF + CONTEXT_DIFF.replace("x.py", "y.py"))
    assert not result.success
    assert f.read_text() == TEXT and [p.name for p in workspace.iterdir()] == ["x.py"]


@needs_gnu
def test_gnu_patch_has_no_fuzz_and_says_why_it_failed() -> None:
    assert gnu_patch(TEXT, CONTEXT_DIFF, "context") == TEXT.replace("line 3\n", "LINE THREE\n")
    stale = TEXT.replace("line 4\n", "line four\n")
    with pytest.raises(GnuPatchError, match="FAILED"):
        gnu_patch(stale, CONTEXT_DIFF, "context")


@needs_gnu
def test_gnu_patch_creating_other_files_is_refused() -> None:
    patch = (
        "--- a/target\n+++ b/target\n@@ -1 +1 @@\n-line 1\n+one\n"
        "--- /dev/null\n+++ b/evil.txt\n@@ -0,0 +1 @@\n+pwned\n"
    )
    # GNU patch applies every section to the named file; either it fails or its result is refused.
    with pytest.raises(GnuPatchError):
        gnu_patch(TEXT, patch)


@needs_gnu
def test_gnu_fallback_reads_normal_diffs(tool: ApplyPatchTool, workspace: Path) -> None:
    f = put(workspace, "x.py", TEXT)
    result = tool.execute(path="x.py", patch="3c3\n< line 3\n---\n> LINE THREE\n")
    assert result.success and result.metadata["engine"] == "gnu-patch"
    assert f.read_text() == TEXT.replace("line 3\n", "LINE THREE\n")


@needs_gnu
def test_ed_scripts_are_never_run(tool: ApplyPatchTool, workspace: Path) -> None:
    f = put(workspace, "x.py", TEXT)
    result = tool.execute(path="x.py", patch="1a\n!touch pwned\n.\nw\nq\n")
    assert not result.success
    assert f.read_text() == TEXT and sorted(p.name for p in workspace.iterdir()) == ["x.py"]


@needs_gnu
def test_ambiguous_hunks_do_not_fall_back_to_gnu_nearest_offset(
    tool: ApplyPatchTool, workspace: Path
) -> None:
    text = "x\ny\nz\n" + "pad\n" * 10 + "x\ny\nz\n"
    f = put(workspace, "x.py", text)
    result = tool.execute(path="x.py", patch="@@ -8,3 +8,3 @@\n x\n-y\n+Y\n z\n")
    assert not result.success and "does not tell which is meant" in (result.error or "")
    assert f.read_text() == text


def test_public_names_are_pinned() -> None:
    import architect_nb.tools.patch.apply_patch as module

    assert sorted(module.__all__) == sorted(
        [
            "ApplyPatchArgs",
            "ApplyPatchTool",
            "PatchError",
            "PatchOutcome",
            "apply_patch_text",
        ]
    )
