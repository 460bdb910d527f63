"""search_code, grep and find_files on a real tree: skip rules, links, encodings, caps and bad input."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.tools.base import ToolResult
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.search.grep import BACKENDS, BackendName, make_backend
from architect_nb.tools.search.search_tools import FindFilesTool, GrepTool, SearchCodeTool

#: The files holding TODO that every tool must see; everything else in the tree must stay unseen.
VISIBLE_TODO = {
    ".hidden/h.py",
    "-dash.py",
    "src/app.py",
    "src/crlf.py",
    "src/late_nul.txt",
    "src/latin1.txt",
    "src/minified.js",
    "src/utf16.txt",
    "src/we ird:name.py",
    "sub/kept.py",
}


def build_tree(root: Path, outside: Path) -> None:
    files: dict[str, bytes] = {
        "src/app.py": b"import os\n\n\ndef main():\n    value = compute(1)\n    return value\n\n\n"
        b"def compute(x):\n    return x + 1  # TODO: check\n",
        "src/util.py": b"def helper():\n    pass\n",
        "src/data.bin": b"TODO\x00\x01\x02",
        "src/late_nul.txt": b"TODO late\n" + b"x" * 9000 + b"\x00\n",
        "src/latin1.txt": "caf\xe9 TODO\n".encode("latin-1"),
        "src/utf16.txt": b"\xff\xfe" + "TODO utf16\n".encode("utf-16-le"),
        "src/crlf.py": b"x = 1\r\n# TODO crlf\r\n",
        "src/minified.js": b"var a=1;" * 5000 + b"/*TODO*/" + b"var b=2;" * 5000 + b"\n",
        "src/we ird:name.py": b"# TODO weird\n",
        "-dash.py": b"# TODO dash\n",
        ".hidden/h.py": b"# TODO hidden\n",
        ".gitignore": b"build/\n*.log\n",
        "build/gen.py": b"# TODO ignored build\n",
        "app.log": b"TODO log\n",
        "node_modules/m/index.js": b"// TODO node\n",
        "env1/pyvenv.cfg": b"home = /usr\n",
        "env1/lib.py": b"# TODO venv\n",
        "__pycache__/c.py": b"# TODO cache\n",
        ".git/config": b"# TODO git\n",
        ".git/info/exclude": b"excluded.py\n",
        "excluded.py": b"# TODO excluded\n",
        "sub/.gitignore": b"local.py\n",
        "sub/local.py": b"# TODO local\n",
        "sub/kept.py": b"# TODO sub\n",
    }
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (outside / "secret.py").write_text("# TODO-SECRET outside\n")
    (outside / "hard.py").write_text("# TODO-SECRET hard\n")
    (root / "link_out.py").symlink_to(outside / "secret.py")
    (root / "link_in.py").symlink_to(root / "src" / "app.py")
    (root / "dir_out").symlink_to(outside)
    os.link(outside / "hard.py", root / "hard.py")
    os.mkfifo(root / "fifo.py")


@pytest.fixture
def tree(workspace: Path, outside: Path) -> Path:
    build_tree(workspace, outside)
    return workspace


def files_in(result: ToolResult) -> set[str]:
    return {m[1] for m in re.finditer(r"^(.*?):\d+: ", result.output, re.MULTILINE)}


def backends() -> list[BackendName]:
    return list(BACKENDS)


def grep_tool(root: Path, backend: BackendName, **kwargs: float) -> GrepTool:
    if make_backend(backend) is None:
        pytest.skip(f"{backend} is not installed")
    return GrepTool(root, backend=backend, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- registration


def test_registered_with_their_schemas(registry: ToolRegistry) -> None:
    for name in ("search_code", "grep", "find_files"):
        tool = registry.get(name)
        assert not tool.sensitive
        params = tool.get_schema()["function"]["parameters"]
        assert all(prop.get("description") for prop in params["properties"].values())
    assert list(registry.get("grep").args_model.model_fields) == [
        "pattern",
        "path",
        "file_pattern",
        "recursive",
        "case_sensitive",
        "max_results",
        "include_outputs",
    ]
    assert list(registry.get("search_code").args_model.model_fields) == [
        "pattern",
        "path",
        "file_pattern",
        "context_lines",
        "max_results",
        "include_outputs",
    ]
    assert list(registry.get("find_files").args_model.model_fields) == ["pattern", "path", "recursive"]


# --------------------------------------------------------------------------- skip rules and links


@pytest.mark.parametrize("backend", backends())
def test_grep_sees_exactly_the_visible_files(tree: Path, backend: BackendName) -> None:
    result = grep_tool(tree, backend).execute(pattern="TODO")
    assert result.success, result.error
    assert files_in(result) == VISIBLE_TODO
    assert "SECRET" not in result.output
    assert result.metadata["backend"] == backend


def test_search_code_sees_exactly_the_visible_files(tree: Path) -> None:
    result = SearchCodeTool(tree).execute(pattern="TODO", file_pattern="*", context_lines=0)
    assert files_in(result) == VISIBLE_TODO
    assert "SECRET" not in result.output


def test_find_files_skip_rules_and_links(tree: Path) -> None:
    result = FindFilesTool(tree).execute(pattern="*.py")
    listed = set(result.output.splitlines())
    assert listed == {
        ".hidden/h.py",
        "-dash.py",
        "src/app.py",
        "src/crlf.py",
        "src/util.py",
        "src/we ird:name.py",
        "sub/kept.py",
        "link_in.py",  # a link whose target is inside is a name worth knowing
        "hard.py",
        "fifo.py",
    }


@pytest.mark.parametrize("tool", ["search_code", "grep", "find_files"])
@pytest.mark.parametrize("path", ["dir_out", "link_out.py", "hard.py", "..", "../outside", "/etc", "~"])
def test_no_search_starts_outside(tree: Path, tool: str, path: str) -> None:
    tools = {"search_code": SearchCodeTool, "grep": GrepTool, "find_files": FindFilesTool}
    result = tools[tool](tree).execute(pattern="*" if tool == "find_files" else "TODO", path=path)
    assert not result.success
    assert "SECRET" not in (result.error or "") + result.output


def test_an_ignored_file_named_as_the_path_is_searched(tree: Path) -> None:
    assert files_in(GrepTool(tree).execute(pattern="TODO", path="build/gen.py")) == {"build/gen.py"}
    assert files_in(SearchCodeTool(tree).execute(pattern="TODO", path="app.log")) == {"app.log"}


def test_an_ignored_folder_named_as_the_path_is_searched(tree: Path) -> None:
    # As rg: a path given is searched even if ignored; the rules still apply to what it holds.
    (tree / "build" / "gen.log").write_text("TODO log in build\n")
    assert files_in(GrepTool(tree).execute(pattern="TODO", path="build")) == {"build/gen.py"}
    assert files_in(SearchCodeTool(tree).execute(pattern="TODO", path="build")) == {"build/gen.py"}
    assert FindFilesTool(tree).execute(pattern="*", path="build").output == "build/gen.py"


# --------------------------------------------------------------------------- arguments


def test_search_code_regex_context_and_format(tree: Path) -> None:
    result = SearchCodeTool(tree).execute(pattern=r"def \w+\(x\)", context_lines=1)
    assert result.output.splitlines() == [
        "src/app.py-8- ",
        "src/app.py:9: def compute(x):",
        "src/app.py-10-     return x + 1  # TODO: check",
    ]
    zero = SearchCodeTool(tree).execute(pattern=r"^def ", path="src", context_lines=0)
    assert zero.output.splitlines() == [
        "src/app.py:4: def main():",
        "src/app.py:9: def compute(x):",
        "src/util.py:1: def helper():",
    ]


def test_search_code_groups_are_separated(tree: Path) -> None:
    result = SearchCodeTool(tree).execute(pattern=r"^def ", path="src", context_lines=1)
    assert result.output.splitlines() == [
        "src/app.py-3- ",
        "src/app.py:4: def main():",
        "src/app.py-5-     value = compute(1)",
        "--",
        "src/app.py-8- ",
        "src/app.py:9: def compute(x):",
        "src/app.py-10-     return x + 1  # TODO: check",
        "--",
        "src/util.py:1: def helper():",
        "src/util.py-2-     pass",
    ]


def test_search_code_file_pattern_and_path(tree: Path) -> None:
    tool = SearchCodeTool(tree)
    assert files_in(tool.execute(pattern="TODO")) == {p for p in VISIBLE_TODO if p.endswith(".py")}
    assert files_in(tool.execute(pattern="TODO", file_pattern="*.{txt,js}")) == {
        "src/late_nul.txt",
        "src/latin1.txt",
        "src/minified.js",
        "src/utf16.txt",
    }
    assert files_in(tool.execute(pattern="TODO", file_pattern="src/*.py")) == {
        "src/app.py",
        "src/crlf.py",
        "src/we ird:name.py",
    }
    assert (
        files_in(tool.execute(pattern="TODO", path="src", file_pattern="src/*.py")) == set()
    )  # below `path`
    assert files_in(tool.execute(pattern="TODO", path="src", file_pattern="*.py")) == {
        "src/app.py",
        "src/crlf.py",
        "src/we ird:name.py",
    }
    assert files_in(tool.execute(pattern="TODO", path="src/latin1.txt")) == {"src/latin1.txt"}
    none = tool.execute(pattern="TODO", file_pattern="*.rs")
    assert none.success and "No files match file_pattern '*.rs'" in none.output


def test_search_code_spans_and_anchors(workspace: Path) -> None:
    (workspace / "m.py").write_text("class A:\n    def f(self):\n        pass\nend\n")
    tool = SearchCodeTool(workspace)
    spanning = tool.execute(pattern=r"class A:\n\s+def", context_lines=0)
    assert spanning.output.splitlines() == ["m.py:1: class A:", "m.py:2:     def f(self):"]
    assert tool.execute(pattern=r"^end$", context_lines=0).output == "m.py:4: end"
    assert tool.execute(pattern=r"(?i)CLASS a", context_lines=0).output == "m.py:1: class A:"


@pytest.mark.parametrize("backend", backends())
def test_grep_arguments(tree: Path, backend: BackendName) -> None:
    tool = grep_tool(tree, backend)
    assert files_in(tool.execute(pattern="todo")) == set()
    assert files_in(tool.execute(pattern="todo", case_sensitive=False)) == VISIBLE_TODO
    assert files_in(tool.execute(pattern="TODO", recursive=False)) == {"-dash.py"}
    assert files_in(tool.execute(pattern="TODO", file_pattern="*.txt")) == {
        "src/late_nul.txt",
        "src/latin1.txt",
        "src/utf16.txt",
    }
    assert files_in(tool.execute(pattern="TODO", path="sub")) == {"sub/kept.py"}
    assert tool.execute(pattern="caf\xe9", path="src").output.startswith("No matches")  # latin-1 bytes
    assert tool.execute(pattern="x + 1  #", path="src/app.py").output == (
        "src/app.py:10:     return x + 1  # TODO: check"
    )
    assert tool.execute(pattern="-rf", path="src").output.startswith("No matches")  # not an option
    crlf = tool.execute(pattern="crlf").output
    assert crlf == "src/crlf.py:2: # TODO crlf"


@pytest.mark.parametrize("backend", backends())
def test_long_lines_are_cut_around_the_match(tree: Path, backend: BackendName) -> None:
    line = grep_tool(tree, backend).execute(pattern="/*TODO*/").output
    assert line.startswith("src/minified.js:1: …")
    assert "/*TODO*/" in line
    assert "[line of 80,008 chars cut]" in line
    assert len(line) < 400


@pytest.mark.parametrize("backend", backends())
def test_caps_are_visible(workspace: Path, backend: BackendName) -> None:
    for i in range(5):
        (workspace / f"f{i}.txt").write_text("hit\n" * 10)
    result = grep_tool(workspace, backend).execute(pattern="hit", max_results=12)
    lines = result.output.splitlines()
    assert lines[:12] == [f"f0.txt:{n}: hit" for n in range(1, 11)] + ["f1.txt:1: hit", "f1.txt:2: hit"]
    assert lines[12:] == ["... 38 more matches in 4 files; narrow the pattern or path."]
    assert result.metadata["matches"] == 50 and result.metadata["truncated"]


def test_search_code_cap_stops_context_before_unshown_matches(workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\nhit\nhit\nhit\ny = 2\n")
    result = SearchCodeTool(workspace).execute(pattern="hit", context_lines=2, max_results=1)
    assert result.output.splitlines() == [
        "a.py-1- x = 1",
        "a.py:2: hit",
        "... 2 more matches in 1 file; narrow the pattern or path.",
    ]


def test_find_files_arguments(tree: Path) -> None:
    tool = FindFilesTool(tree)
    assert tool.execute(pattern="app.py").output == "src/app.py"
    assert tool.execute(pattern="src/*.py").output.splitlines() == [
        "src/app.py",
        "src/crlf.py",
        "src/util.py",
        "src/we ird:name.py",
    ]
    assert tool.execute(pattern="*.py", recursive=False).output.splitlines() == [
        "-dash.py",
        "fifo.py",
        "hard.py",
        "link_in.py",
    ]
    assert tool.execute(pattern="*.py", path="sub").output == "sub/kept.py"
    assert tool.execute(pattern="**/h.py", recursive=False).output == ".hidden/h.py"
    capped = FindFilesTool(tree, max_files=3).execute(pattern="*.py").output.splitlines()
    assert capped == ["-dash.py", ".hidden/h.py", "fifo.py", "... 7 more files; narrow the pattern or path."]
    assert "Ignoring case, 'src/app.py' would match" in tool.execute(pattern="APP.py").output
    assert "try '*kept*'" in tool.execute(pattern="kept").output
    assert not tool.execute(pattern="*.py", path="src/app.py").success


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("foo(bar", "missing ), unterminated subpattern at position 3"),
        ("[a-", "unterminated character set at position 0"),
        ("a{2,1}", "min repeat greater than max repeat at position 2"),
        ("(?P<x>a)(?P<x>b)", "redefinition of group name 'x'"),
        ("", "The pattern is empty"),
        ("a" * 5000, "the limit is 2,000"),
    ],
)
def test_search_code_bad_regex_says_where_and_what(tree: Path, pattern: str, expected: str) -> None:
    result = SearchCodeTool(tree).execute(pattern=pattern)
    assert not result.success
    assert expected in (result.error or "")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"pattern": ""}, "empty"),
        ({"pattern": "a\nb"}, "spans lines"),
        ({"pattern": "a\x00"}, "NUL"),
        ({"pattern": "\ud800"}, "surrogate"),
        ({"pattern": "x" * 1001}, "limit is 1,000"),
        ({"pattern": "x", "path": "missing"}, "'missing' does not exist"),
        ({"pattern": "x", "path": "../outside"}, "escapes the workspace"),
        ({"pattern": "x", "file_pattern": "{a,b"}, "unclosed"),
        ({"pattern": "x", "max_results": 0}, "max_results"),
        ({"pattern": "x", "bogus": 1}, "bogus"),
    ],
)
def test_grep_bad_input(tree: Path, args: dict[str, object], expected: str) -> None:
    result = GrepTool(tree).execute(**args)
    assert not result.success
    assert expected in (result.error or "")


def test_fifo_named_directly_is_refused(tree: Path) -> None:
    result = GrepTool(tree).execute(pattern="x", path="fifo.py")
    assert not result.success and "not a regular file" in (result.error or "")


# --------------------------------------------------------------------------- time bounds


def test_catastrophic_regex_is_cut_and_the_next_search_works(workspace: Path) -> None:
    (workspace / "evil.py").write_text("a" * 40 + "!\n")
    tool = SearchCodeTool(workspace, time_bound=1.0)
    start = time.monotonic()
    result = tool.execute(pattern=r"(a+)+$")
    assert time.monotonic() - start < 5
    assert result.success and result.metadata["timed_out"]
    assert "time bound" in result.output and "(a+)+" in result.output
    assert tool.execute(pattern="a!", context_lines=0).output == "evil.py:1: " + "a" * 40 + "!"


@pytest.mark.parametrize("tool", [GrepTool, SearchCodeTool, FindFilesTool])
def test_every_tool_reports_its_time_bound(tree: Path, tool: type[GrepTool]) -> None:
    result = tool(tree, time_bound=0.0).execute(pattern="*.py" if tool is FindFilesTool else "TODO")
    assert result.success and result.metadata["timed_out"]
    assert "time bound" in result.output
    assert "Nested quantifiers" not in result.output  # the regex was not to blame


# --------------------------------------------------------------------------- hostile input


_HOSTILE = st.one_of(
    st.text(max_size=30),
    st.text(alphabet="()[]{}*+?|^$\\.-aA\n\x00\ud800é", max_size=20),
    st.sampled_from(
        ["(a+)+$", "(?P<", "\\", "[[:alpha:]]", "(?<=a+)b", "a{99999999999}", "(" * 300, "é" * 3000]
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pattern=_HOSTILE, file_pattern=_HOSTILE, path=_HOSTILE, numbers=st.tuples(st.integers(), st.integers())
)
def test_hostile_arguments_never_raise(
    tree: Path, pattern: str, file_pattern: str, path: str, numbers: tuple[int, int]
) -> None:
    calls = [
        SearchCodeTool(tree, time_bound=2).execute(
            pattern=pattern, file_pattern=file_pattern or "*", context_lines=numbers[0] % 30 - 5
        ),
        SearchCodeTool(tree, time_bound=2).execute(pattern=pattern, path=path),
        GrepTool(tree, time_bound=2).execute(
            pattern=pattern, file_pattern=file_pattern, max_results=numbers[1]
        ),
        GrepTool(tree, time_bound=2).execute(pattern=pattern, path=path, case_sensitive=False),
        FindFilesTool(tree, time_bound=2).execute(pattern=file_pattern, path=path),
    ]
    for result in calls:
        assert isinstance(result, ToolResult)
        assert result.success or result.error
        assert "SECRET" not in result.output + (result.error or "")


@pytest.mark.parametrize("backend", backends())
def test_undecodable_file_names_are_shown_safely(workspace: Path, backend: BackendName) -> None:
    with open(os.path.join(os.fsencode(workspace), b"caf\xe9.py"), "wb") as f:
        f.write(b"# TODO odd name\n")
    results = [
        grep_tool(workspace, backend).execute(pattern="TODO"),
        SearchCodeTool(workspace).execute(pattern="TODO"),
        FindFilesTool(workspace).execute(pattern="*.py"),
    ]
    assert [r.output.split(":")[0] for r in results] == ["caf\ufffd.py"] * 3
    for result in results:
        result.output.encode("utf-8")  # no lone surrogate reaches the model


def test_a_path_pattern_implies_depth(tree: Path) -> None:
    assert FindFilesTool(tree).execute(pattern="sub/*.py", recursive=False).output == "sub/kept.py"
    result = GrepTool(tree).execute(pattern="TODO", file_pattern="sub/*.py", recursive=False)
    assert files_in(result) == {"sub/kept.py"}


def test_a_broken_program_falls_back_to_python(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.tools.search import code
    from architect_nb.tools.search.grep import _ProgramBackend

    fake = tree.parent / "fake-rg"
    fake.write_text("#!/bin/sh\necho 'regex parse error: boom' >&2\nexit 2\n")
    fake.chmod(0o755)
    tool = GrepTool(tree)
    tool._backend = _ProgramBackend("rg", str(fake))
    result = tool.execute(pattern="TODO")
    assert result.metadata["backend"] == "python"
    assert files_in(result) == VISIBLE_TODO
    monkeypatch.setattr(code, "find_rg", lambda: str(fake))
    monkeypatch.setattr(code, "_PREFILTER_MIN_FILES", 0)
    searched = SearchCodeTool(tree).execute(pattern="TODO", file_pattern="*", context_lines=0)
    assert files_in(searched) == VISIBLE_TODO


@pytest.mark.parametrize("backend", backends())
def test_hidden_characters_in_names_and_lines_are_shown_as_escapes(
    workspace: Path, backend: BackendName
) -> None:
    """A bidi override or an ANSI escape in a file name or a line cannot reorder or hide a result."""
    (workspace / "evil\u202etxt.py").write_text("hit = 1  # \x1b[8mhidden\x1b[0m \u200b\n")
    result = grep_tool(workspace, backend).execute(pattern="hit")
    assert result.success, result
    assert "\u202e" not in result.output and "\x1b" not in result.output and "\u200b" not in result.output
    assert "evil\\u202etxt.py:1: hit = 1  # \\x1b[8mhidden\\x1b[0m \\u200b" in result.output
