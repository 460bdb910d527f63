from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from architect_nb.tools.filesystem.file_tools import (
    DeleteFileTool,
    ListFilesTool,
    ReadFileTool,
    WriteFileTool,
)


@pytest.fixture
def read(workspace: Path) -> ReadFileTool:
    return ReadFileTool(workspace, max_bytes=1024)


@pytest.fixture
def write(workspace: Path) -> WriteFileTool:
    return WriteFileTool(workspace)


# --------------------------------------------------------------------------- read_file


def test_read_whole_file(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "a.py").write_text("print('hi')\n")
    result = read.execute(path="a.py")
    assert result.success and result.output == "print('hi')\n"


def test_read_keeps_crlf_and_bom_free_text(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    assert read.execute(path="w.txt").output == "one\r\ntwo\r\n"


def test_read_missing_file_and_folder(workspace: Path, read: ReadFileTool) -> None:
    missing = read.execute(path="nope.py")
    assert not missing.success and "does not exist" in (missing.error or "")
    (workspace / "pkg").mkdir()
    folder = read.execute(path="pkg")
    assert not folder.success and "is a directory" in (folder.error or "")


def test_read_size_cap_says_how_to_read_in_parts(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "big.txt").write_text("".join(f"line {i}\n" for i in range(2000)))
    result = read.execute(path="big.txt")
    assert not result.success
    assert "KB" in (result.error or "") and "offset/limit" in (result.error or "")


def test_read_in_parts(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 2001)))
    part = read.execute(path="big.txt", offset=10, limit=3)
    assert part.success
    assert (
        part.output == "line 10\nline 11\nline 12\n[... showing lines 10-12 of 2000; continue with offset=13]"
    )
    tail = read.execute(path="big.txt", offset=1999)
    assert tail.output == "line 1999\nline 2000\n"
    past = read.execute(path="big.txt", offset=5000)
    assert not past.success and "2000 lines" in (past.error or "")


def test_read_in_parts_caps_output_and_cuts_huge_lines(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "min.js").write_text("x" * 50_000 + "\nsecond\n")
    result = read.execute(path="min.js", offset=1, limit=2)
    assert result.success
    assert "line 1 cut at 1024 of 50001 characters" in result.output
    assert len(result.output) < 2000


def test_read_binary_is_refused(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    for kwargs in ({}, {"offset": 1}):
        result = read.execute(path="img.png", **kwargs)
        assert not result.success and "binary" in (result.error or "")


def test_read_latin1_is_decoded_and_says_its_encoding(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "latin.txt").write_bytes("ok\ncafé\n".encode("latin-1"))
    result = read.execute(path="latin.txt")
    assert result.success, result.error
    assert result.output == "ok\ncafé\n[... file encoding: cp1252; edits are saved in it]"


def test_read_undecodable_names_the_problem(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "a.py").write_bytes("# coding: ascii\nok = 'café'\n".encode("latin-1"))
    result = read.execute(path="a.py")
    assert not result.success
    assert "not valid ascii" in (result.error or "") and "0xe9" in (result.error or "")
    assert "line 2" in (result.error or "")


def test_read_utf16_with_bom(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "u16.txt").write_bytes("\ufeffhello\nworld\n".encode("utf-16-le"))
    assert read.execute(path="u16.txt").output == "hello\nworld\n"
    assert read.execute(path="u16.txt", offset=2).output == "world\n"


def test_read_empty_file(workspace: Path, read: ReadFileTool) -> None:
    (workspace / "empty").write_text("")
    assert read.execute(path="empty").output == ""
    assert read.execute(path="empty", offset=1).success


def test_read_special_file_is_refused(workspace: Path, read: ReadFileTool) -> None:
    os.mkfifo(workspace / "pipe")
    result = read.execute(path="pipe")
    assert not result.success and "not a regular file" in (result.error or "")


# --------------------------------------------------------------------------- write_file


def test_write_creates_parents(workspace: Path, write: WriteFileTool) -> None:
    result = write.execute(path="deep/er/new.py", content="x = 1\n")
    assert result.success and result.output == "Created deep/er/new.py (1 lines)."
    assert (workspace / "deep/er/new.py").read_text() == "x = 1\n"
    assert "+x = 1" in result.metadata["diff"]


def test_overwrite_reports_changes_and_keeps_mode(workspace: Path, write: WriteFileTool) -> None:
    target = workspace / "run.sh"
    target.write_text("echo a\necho b\n")
    target.chmod(0o751)
    result = write.execute(path="run.sh", content="echo a\necho c\n")
    assert result.success and result.output == "Wrote run.sh (+1 -1 lines)."
    assert target.read_text() == "echo a\necho c\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751


def test_new_file_follows_umask(workspace: Path, write: WriteFileTool) -> None:
    old = os.umask(0o027)
    try:
        from architect_nb.tools.filesystem import fileio

        fileio._umask = None  # read the umask afresh for this test
        write.execute(path="new.txt", content="x")
    finally:
        os.umask(old)
        fileio._umask = None
    assert stat.S_IMODE((workspace / "new.txt").stat().st_mode) == 0o640


def test_append_never_truncates(workspace: Path, write: WriteFileTool) -> None:
    target = workspace / "log.txt"
    target.write_text("one\n")
    assert write.execute(path="log.txt", content="two\n", mode="append").success
    assert write.execute(path="fresh.txt", content="first\n", mode="append").success
    assert target.read_text() == "one\ntwo\n"
    assert (workspace / "fresh.txt").read_text() == "first\n"


def test_append_keeps_encoding(workspace: Path, write: WriteFileTool) -> None:
    target = workspace / "bom.txt"
    target.write_bytes(b"\xef\xbb\xbfa\n")
    write.execute(path="bom.txt", content="b\n", mode="append")
    assert target.read_bytes() == b"\xef\xbb\xbfa\nb\n"


def test_append_to_binary_is_refused_and_file_kept(workspace: Path, write: WriteFileTool) -> None:
    target = workspace / "blob.bin"
    target.write_bytes(b"\x00\x01\x02")
    result = write.execute(path="blob.bin", content="text", mode="append")
    assert not result.success and "binary" in (result.error or "")
    assert target.read_bytes() == b"\x00\x01\x02"


def test_overwrite_binary_is_allowed(workspace: Path, write: WriteFileTool) -> None:
    (workspace / "blob.bin").write_bytes(b"\x00\x01")
    assert write.execute(path="blob.bin", content="now text\n").success
    assert (workspace / "blob.bin").read_text() == "now text\n"


def test_write_refusals_leave_files_alone(workspace: Path, write: WriteFileTool) -> None:
    (workspace / "dir").mkdir()
    (workspace / "file").write_text("keep")
    (workspace / "ro.txt").write_text("read only")
    (workspace / "ro.txt").chmod(0o444)
    cases = {
        "dir": "is a directory",
        "file/child.txt": "is a file, not a folder",
        "ro.txt": "read-only",
    }
    for path, message in cases.items():
        result = write.execute(path=path, content="new")
        assert not result.success and message in (result.error or ""), path
    assert (workspace / "file").read_text() == "keep"
    assert (workspace / "ro.txt").read_text() == "read only"


def test_write_refuses_surrogates_and_huge_content(workspace: Path, write: WriteFileTool) -> None:
    bad = write.execute(path="s.txt", content="a\ud800b")
    assert not bad.success and "surrogate" in (bad.error or "")
    huge = write.execute(path="h.txt", content="x" * (11 * 1024 * 1024))
    assert not huge.success and "at most" in (huge.error or "")
    assert not (workspace / "s.txt").exists() and not (workspace / "h.txt").exists()


def test_write_leaves_no_temp_files(workspace: Path, write: WriteFileTool) -> None:
    for i in range(3):
        write.execute(path="a.txt", content=f"v{i}")
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt"]


def test_write_through_inside_symlink_updates_target(workspace: Path, write: WriteFileTool) -> None:
    (workspace / "real.txt").write_text("old")
    (workspace / "alias.txt").symlink_to("real.txt")
    assert write.execute(path="alias.txt", content="new").success
    assert (workspace / "real.txt").read_text() == "new"
    assert (workspace / "alias.txt").is_symlink()


def test_write_preview_is_the_diff_without_writing(workspace: Path, write: WriteFileTool) -> None:
    (workspace / "a.txt").write_text("one\n")
    diff = write.preview(path="a.txt", content="two\n")
    assert diff is not None and "-one" in diff and "+two" in diff
    assert (workspace / "a.txt").read_text() == "one\n"


# --------------------------------------------------------------------------- delete_file


def test_delete_disabled_by_default(workspace: Path) -> None:
    (workspace / "a.txt").write_text("x")
    result = DeleteFileTool(workspace).execute(path="a.txt")
    assert not result.success and "allow_delete" in (result.error or "")
    assert (workspace / "a.txt").exists()


def test_delete_file(workspace: Path) -> None:
    (workspace / "a.txt").write_text("x")
    tool = DeleteFileTool(workspace, allow_delete=True)
    assert tool.execute(path="a.txt").output == "Deleted a.txt."
    assert not (workspace / "a.txt").exists()
    again = tool.execute(path="a.txt")
    assert not again.success and "does not exist" in (again.error or "")


def test_delete_refuses_folders_and_root(workspace: Path) -> None:
    (workspace / "pkg").mkdir()
    tool = DeleteFileTool(workspace, allow_delete=True)
    assert "folder" in (tool.execute(path="pkg").error or "")
    assert "root" in (tool.execute(path=".").error or "")
    assert (workspace / "pkg").is_dir()


def test_delete_symlink_removes_the_link_not_the_target(workspace: Path) -> None:
    (workspace / "real.txt").write_text("keep")
    (workspace / "alias.txt").symlink_to("real.txt")
    assert DeleteFileTool(workspace, allow_delete=True).execute(path="alias.txt").success
    assert not (workspace / "alias.txt").exists()
    assert (workspace / "real.txt").read_text() == "keep"


# --------------------------------------------------------------------------- list_files


@pytest.fixture
def repo(workspace: Path) -> Path:
    files = [
        "README.md",
        "src/app.py",
        "src/util.py",
        "src/web/page.ts",
        "tests/test_app.py",
        "build/out.js",
        "debug.log",
        ".git/config",
        "node_modules/lib/index.js",
        "src/__pycache__/app.cpython-311.pyc",
        "nb/.ipynb_checkpoints/x-checkpoint.ipynb",
        "env/pyvenv.cfg",
        "env/lib/site.py",
        "docs/keep.log",
    ]
    for rel in files:
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text("x\n")
    (workspace / ".gitignore").write_text("build/\n*.log\n")
    (workspace / "docs/.gitignore").write_text("!keep.log\n")
    return workspace


def test_list_top_level(repo: Path) -> None:
    result = ListFilesTool(repo).execute()
    assert result.output.splitlines() == [".gitignore", "README.md", "docs/", "nb/", "src/", "tests/"]


def test_list_recursive_applies_skip_rules(repo: Path) -> None:
    listed = ListFilesTool(repo).execute(recursive=True).output.splitlines()
    assert listed == [
        ".gitignore",
        "README.md",
        "docs/",
        "docs/.gitignore",
        "docs/keep.log",
        "nb/",
        "src/",
        "src/app.py",
        "src/util.py",
        "src/web/",
        "src/web/page.ts",
        "tests/",
        "tests/test_app.py",
    ]


def test_list_with_patterns(repo: Path) -> None:
    tool = ListFilesTool(repo)
    assert tool.execute(pattern="*.py", recursive=True).output.splitlines() == [
        "src/app.py",
        "src/util.py",
        "tests/test_app.py",
    ]
    assert tool.execute(path="src", pattern="*.py").output.splitlines() == ["src/app.py", "src/util.py"]
    assert tool.execute(pattern="src/**/*.ts").output.splitlines() == ["src/web/page.ts"]
    assert tool.execute(pattern="**/*.{md,ts}").output.splitlines() == ["README.md", "src/web/page.ts"]


def test_list_no_match_explains_skips(repo: Path) -> None:
    result = ListFilesTool(repo).execute(pattern="*.rs", recursive=True)
    assert result.success and result.output.startswith("No files matching '*.rs'")
    assert ".gitignored" in result.output


def test_list_cap_is_visible(workspace: Path) -> None:
    for i in range(30):
        (workspace / f"f{i:02}.txt").write_text("")
    result = ListFilesTool(workspace, max_entries=10).execute()
    lines = result.output.splitlines()
    assert lines[:10] == [f"f{i:02}.txt" for i in range(10)]
    assert lines[10] == "... and 20 more; narrow with `pattern` or a subfolder `path`."


def test_list_never_follows_links_out(workspace: Path, outside: Path) -> None:
    (workspace / "a.txt").write_text("")
    (workspace / "out_dir").symlink_to(outside)
    (workspace / "out_file").symlink_to(outside / "secret.txt")
    (workspace / "in_link").symlink_to("a.txt")
    listed = ListFilesTool(workspace).execute(recursive=True).output.splitlines()
    assert listed == ["a.txt", "in_link"]


def test_list_errors(workspace: Path) -> None:
    (workspace / "f.txt").write_text("")
    tool = ListFilesTool(workspace)
    assert "does not exist" in (tool.execute(path="nope").error or "")
    assert "is a file" in (tool.execute(path="f.txt").error or "")
    assert "unclosed" in (tool.execute(pattern="*.{py").error or "")
    assert "escapes" in (tool.execute(path="..").error or "")


def test_write_diff_splits_lines_on_newlines_only(workspace: Path, write: WriteFileTool) -> None:
    (workspace / "f.txt").write_text("page one\fstill line one\nline two\u2028same line\n")
    result = write.execute(path="f.txt", content="page one\fstill line one\nline 2\u2028same line\n")
    assert result.output == "Wrote f.txt (+1 -1 lines)."


def test_listed_names_show_hidden_characters_as_escapes(workspace: Path) -> None:
    (workspace / "report\u202efdp.exe").write_text("")
    (workspace / "zero\u200bwidth.txt").write_text("")
    result = ListFilesTool(workspace).execute()
    assert "\u202e" not in result.output and "\u200b" not in result.output
    assert "report\\u202efdp.exe" in result.output and "zero\\u200bwidth.txt" in result.output
