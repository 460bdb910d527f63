"""edit_file: the exactly-once rule, errors that help the model recover, loose matches, intact files."""

from __future__ import annotations

import codecs
import stat
from pathlib import Path

import pytest

from architect_nb.tools.filesystem.edit_file import (
    EditError,
    EditFileTool,
    load_for_edit,
    plan_edit,
    write_edit,
)
from architect_nb.tools.filesystem.file_tools import EditFileTool as ReExported
from architect_nb.tools.filesystem.fileio import FileAccessError
from architect_nb.tools.registry import ToolRegistry

CODE = "def calculate(a, b):\n    return a + b\n\n\ndef other():\n    return 2\n"


@pytest.fixture
def tool(workspace: Path) -> EditFileTool:
    return EditFileTool(workspace)


def put(workspace: Path, name: str, data: bytes | str) -> Path:
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_exported_registered_and_sensitive(registry: ToolRegistry) -> None:
    assert ReExported is EditFileTool
    tool = registry.get("edit_file")
    assert isinstance(tool, EditFileTool)
    assert tool.sensitive and tool.mutates_files
    params = tool.get_schema()["function"]["parameters"]
    assert set(params["required"]) == {"path", "old_str", "new_str"}
    assert all(p.get("description") for p in params["properties"].values())


def test_replaces_the_one_occurrence_and_returns_the_diff(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "src/utils.py", CODE)
    result = tool.execute(
        path="src/utils.py",
        old_str="def calculate(a, b):\n    return a + b",
        new_str='def calculate(a: int, b: int) -> int:\n    """Sum."""\n    return a + b',
    )
    assert result.success, result.error
    assert f.read_text() == CODE.replace(
        "def calculate(a, b):", 'def calculate(a: int, b: int) -> int:\n    """Sum."""'
    )
    assert "+def calculate(a: int, b: int) -> int:" in result.output
    assert "-def calculate(a, b):" in result.output
    assert result.metadata["diff"] in result.output
    assert result.metadata["line"] == 1 and result.metadata["loose"] is False
    assert "(+2 -1 lines)" in result.output


def test_not_found_shows_the_closest_lines_with_numbers(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "a.py", CODE)
    result = tool.execute(path="a.py", old_str="def other():\n    return 3\n", new_str="x")
    assert not result.success
    assert "old_str was not found in 'a.py'" in (result.error or "")
    assert "closest text is at lines 5-6" in (result.error or "")
    assert "5 | def other():" in (result.error or "")
    assert "6 |     return 2" in (result.error or "")
    assert f.read_text() == CODE


def test_not_found_says_when_only_indentation_differs(tool: EditFileTool, workspace: Path) -> None:
    put(workspace, "a.py", CODE)
    result = tool.execute(path="a.py", old_str="def other():\n  return 2", new_str="x")
    assert "same lines exist with different indentation" in (result.error or "")


def test_not_found_with_nothing_alike(tool: EditFileTool, workspace: Path) -> None:
    put(workspace, "a.py", CODE)
    result = tool.execute(path="a.py", old_str="zzzz qqqq", new_str="x")
    assert "Nothing in its 6 lines resembles it" in (result.error or "")


def test_several_occurrences_give_each_line_number(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "a.py", CODE)
    result = tool.execute(path="a.py", old_str="    return", new_str="    yield")
    assert not result.success
    assert "occurs 2 times in 'a.py', at lines 2 and 6" in (result.error or "")
    assert "Include more surrounding lines" in (result.error or "")
    assert f.read_text() == CODE


def test_many_occurrences_are_capped(workspace: Path) -> None:
    with pytest.raises(EditError, match=r"occurs 21\+ times .* \(and more\)"):
        plan_edit("x\n" * 1000, "x", "y")


def test_loose_match_ignores_trailing_whitespace_and_says_so(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "a.py", "if x:   \n    go()\t\nend\n")
    result = tool.execute(path="a.py", old_str="if x:\n    go()\n", new_str="if y:\n    stop()\n")
    assert result.success, result.error
    assert f.read_text() == "if y:\n    stop()\nend\n"
    assert "Loose match" in result.output and result.metadata["loose"] is True


def test_ambiguous_loose_match_is_refused(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "a.py", "a = 1  \nb\na = 1\t\n")
    result = tool.execute(path="a.py", old_str="a = 1\nb\na = 1\n", new_str="z\n")
    assert result.success  # unique: spans both lines
    f.write_text("a = 1  \nb\na = 1\t\nc\n")
    result = tool.execute(path="a.py", old_str="a = 1\n", new_str="z\n")
    assert not result.success
    assert "matches only loosely but occurs 2 times" in (result.error or "")
    assert "lines 1 and 3" in (result.error or "")


def test_loose_last_line_must_end_a_line() -> None:
    # "x = 1<tab>" must not loosely match the start of "x = 1 + 2", only a line that ends there.
    with pytest.raises(EditError, match="not found"):
        plan_edit("x = 1 + 2\n", "x = 1\t", "y")
    assert plan_edit("x = 1 + 2\nx = 1\n", "x = 1\t", "y").new_text == "x = 1 + 2\ny\n"


def test_crlf_file_stays_crlf(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "w.txt", b"one\r\ntwo\r\nthree\r\n")
    result = tool.execute(path="w.txt", old_str="one\ntwo\n", new_str="1\n2\n2.5\n")
    assert result.success, result.error
    assert f.read_bytes() == b"1\r\n2\r\n2.5\r\nthree\r\n"
    assert "line endings" in result.output
    result = tool.execute(path="w.txt", old_str="three", new_str="3\n4")
    assert f.read_bytes() == b"1\r\n2\r\n2.5\r\n3\r\n4\r\n"


def test_final_newline_or_its_absence_is_kept(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "no_eol.txt", "a\nb")
    assert tool.execute(path="no_eol.txt", old_str="b", new_str="c\n").success
    assert f.read_bytes() == b"a\nc"
    g = put(workspace, "eol.txt", "a\nb\n")
    assert tool.execute(path="eol.txt", old_str="b\n", new_str="c").success
    assert g.read_bytes() == b"a\nc\n"


def test_edit_that_changes_nothing_after_normalising_is_refused(tool: EditFileTool, workspace: Path) -> None:
    put(workspace, "no_eol.txt", "a\nb")
    result = tool.execute(path="no_eol.txt", old_str="b", new_str="b\n")
    assert not result.success and "changes nothing" in (result.error or "")


@pytest.mark.parametrize(
    ("bom", "encoding"),
    [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")],
)
def test_encoding_and_bom_are_kept(tool: EditFileTool, workspace: Path, bom: bytes, encoding: str) -> None:
    f = put(workspace, "enc.txt", bom + "héllo\nwörld\n".encode(encoding))
    assert tool.execute(path="enc.txt", old_str="wörld", new_str="mündo").success
    assert f.read_bytes() == bom + "héllo\nmündo\n".encode(encoding)


def test_permission_bits_are_kept_and_no_temp_file_is_left(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "run.sh", "#!/bin/sh\necho hi\n")
    f.chmod(0o751)
    assert tool.execute(path="run.sh", old_str="echo hi", new_str="echo bye").success
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    assert [p.name for p in workspace.iterdir()] == ["run.sh"]


def test_read_only_file_is_refused(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "ro.txt", "a\n")
    f.chmod(0o444)
    result = tool.execute(path="ro.txt", old_str="a", new_str="b")
    assert not result.success and "read-only" in (result.error or "")
    assert f.read_text() == "a\n"


def test_empty_and_identical_strings_are_refused(tool: EditFileTool, workspace: Path) -> None:
    put(workspace, "a.py", CODE)
    empty = tool.execute(path="a.py", old_str="", new_str="x")
    assert not empty.success and "write_file" in (empty.error or "")
    same = tool.execute(path="a.py", old_str="return 2", new_str="return 2")
    assert not same.success and "identical" in (same.error or "")


@pytest.mark.parametrize(
    ("name", "expected"),
    [("missing.py", "does not exist"), ("folder", "is a directory"), ("blob.bin", "binary file")],
)
def test_unusable_targets(tool: EditFileTool, workspace: Path, name: str, expected: str) -> None:
    (workspace / "folder").mkdir()
    put(workspace, "blob.bin", b"\x00\x01\x02abc")
    result = tool.execute(path=name, old_str="abc", new_str="x")
    assert not result.success and expected in (result.error or "")


def test_unpaired_surrogate_is_refused_and_file_untouched(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "a.py", CODE)
    result = tool.execute(path="a.py", old_str="return 2", new_str="return '\ud800'")
    assert not result.success and "cannot store" in (result.error or "")
    assert f.read_text() == CODE


def test_preview_shows_the_diff_without_writing(tool: EditFileTool, workspace: Path) -> None:
    f = put(workspace, "a.py", CODE)
    diff = tool.preview(path="a.py", old_str="return 2", new_str="return 3")
    assert diff is not None and "-    return 2" in diff and "+    return 3" in diff
    assert f.read_text() == CODE
    with pytest.raises(EditError):
        tool.preview(path="a.py", old_str="return", new_str="yield")


def test_huge_old_str_fails_fast(tool: EditFileTool, workspace: Path) -> None:
    put(workspace, "a.py", CODE * 2000)
    result = tool.execute(path="a.py", old_str="q" * 2_000_000, new_str="x")
    assert not result.success and "not found" in (result.error or "")


def test_edit_through_a_symlink_inside_the_workspace_changes_the_target(
    tool: EditFileTool, workspace: Path
) -> None:
    real = put(workspace, "real.py", CODE)
    (workspace / "link.py").symlink_to(real)
    assert tool.execute(path="link.py", old_str="return 2", new_str="return 3").success
    assert (workspace / "link.py").is_symlink()
    assert "return 3" in real.read_text()


def test_file_changed_while_editing_is_left_alone(workspace: Path) -> None:
    f = put(workspace, "a.py", CODE)
    before = load_for_edit(f, "a.py")
    f.write_text("someone else's text\n")
    with pytest.raises(FileAccessError, match="changed while it was being edited"):
        write_edit(f, "a.py", before, "new\n")
    assert f.read_text() == "someone else's text\n"


def test_public_names_are_pinned() -> None:
    import architect_nb.tools.filesystem.edit_file as module

    assert sorted(module.__all__) == sorted(
        [
            "MAX_EDIT_BYTES",
            "EditError",
            "EditFileArgs",
            "EditFileTool",
            "EditPlan",
            "load_for_edit",
            "plan_edit",
            "write_edit",
        ]
    )
