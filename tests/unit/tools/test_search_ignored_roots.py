"""A folder named as the path is searched even if .gitignored, as rg does; the rules still apply inside it.

Covers grep (every backend), search_code, find_files and list_files, the sandbox and the sensitive-file rules
around such a folder, and the walk against rg's own file list on random trees and rules.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from architect_nb.config.schema import AppConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.tools.base import ToolResult
from architect_nb.tools.filesystem.file_tools import ListFilesTool
from architect_nb.tools.search.grep import BACKENDS, make_backend
from architect_nb.tools.search.programs import find_rg
from architect_nb.tools.search.search_tools import FindFilesTool, GrepTool, SearchCodeTool
from architect_nb.tools.tree.walk import scan

INSTALLED = [name for name in BACKENDS if make_backend(name) is not None]

#: A data scientist's project: outputs and data are ignored, and hold files the user asks about.
PROJECT = {
    ".gitignore": "build/\ndata/\n*.log\n/outputs\n",
    "src/app.py": "NEEDLE in src\n",
    "build/gen.py": "NEEDLE in build\n",
    "build/run.log": "NEEDLE in a log\n",  # *.log still applies inside the named folder
    "build/sub/deep.py": "NEEDLE deep\n",
    "build/.gitignore": "local.py\n",
    "build/local.py": "NEEDLE local\n",  # so does a .gitignore inside it
    "build/.git/config": "NEEDLE git\n",  # and the skip list
    "build/node_modules/m.js": "NEEDLE node\n",
    "build/env/pyvenv.cfg": "home = /usr\n",
    "build/env/lib.py": "NEEDLE venv\n",
    "build/__pycache__/c.py": "NEEDLE cache\n",
    "data/raw/a.csv": "id,NEEDLE\n",
    "data/raw/b.csv": "id,other\n",
    "data/clean.csv": "NEEDLE clean\n",
    "outputs/report.txt": "NEEDLE report\n",
}


def make_project(root: Path) -> None:
    for rel, text in PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture
def project(workspace: Path) -> Path:
    make_project(workspace)
    return workspace


def files_in(result: ToolResult) -> set[str]:
    return {m[1] for m in re.finditer(r"^(.*?):\d+: ", result.output, re.MULTILINE)}


def found_by_every_tool(root: Path, path: str) -> dict[str, set[str]]:
    """The files each tool finds in `path`: grep on each backend, search_code, find_files and list_files."""
    found = {
        f"grep/{name}": files_in(GrepTool(root, backend=name).execute(pattern="NEEDLE", path=path))
        for name in INSTALLED
    }
    found["search_code"] = files_in(
        SearchCodeTool(root).execute(pattern="NEEDLE", path=path, file_pattern="*")
    )
    listed = FindFilesTool(root).execute(pattern="*", path=path).output.splitlines()
    found["find_files"] = {rel for rel in listed if "NEEDLE" in (root / rel).read_text()}
    entries = ListFilesTool(root).execute(path=path, recursive=True).metadata["entries"]
    found["list_files"] = {
        rel for rel in entries if not rel.endswith("/") and "NEEDLE" in (root / rel).read_text()
    }
    return found


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".", {"src/app.py"}),
        ("build", {"build/gen.py", "build/sub/deep.py"}),
        ("build/sub", {"build/sub/deep.py"}),
        ("data", {"data/raw/a.csv", "data/clean.csv"}),
        ("data/raw", {"data/raw/a.csv"}),
        ("outputs", {"outputs/report.txt"}),
    ],
)
def test_every_tool_searches_a_named_ignored_folder(project: Path, path: str, expected: set[str]) -> None:
    found = found_by_every_tool(project, path)
    assert found == dict.fromkeys(found, expected)


def test_list_files_shows_the_named_folder_with_the_rules_inside(project: Path) -> None:
    listed = ListFilesTool(project).execute(path="build").output.splitlines()
    assert listed == ["build/.gitignore", "build/gen.py", "build/sub/"]
    assert ListFilesTool(project).execute(path="data/raw").output.splitlines() == [
        "data/raw/a.csv",
        "data/raw/b.csv",
    ]
    top = ListFilesTool(project).execute().output.splitlines()
    assert top == [".gitignore", "src/"]  # the folders stay hidden from a walk that does not name them


def test_messages_and_caps_are_unchanged(project: Path) -> None:
    for i in range(30):
        (project / "build" / f"f{i:02}.py").write_text("NEEDLE\n")
    listed = ListFilesTool(project, max_entries=5).execute(path="build").output.splitlines()
    assert listed[-1] == "... and 28 more; narrow with `pattern` or a subfolder `path`."
    grep = GrepTool(project).execute(pattern="NEEDLE", path="build", max_results=3).output.splitlines()
    assert grep[-1] == "... 29 more matches in 29 files; narrow the pattern or path."
    nothing = GrepTool(project).execute(pattern="NEEDLE", path="build", file_pattern="*.rs")
    assert nothing.output.startswith("No files match file_pattern '*.rs' in 'build'")


def test_a_skipped_folder_named_inside_an_ignored_one_keeps_its_own_rules(project: Path) -> None:
    # A folder named is walked as rg walks it: `build/env` (a virtualenv) and `build/.git` are searched only
    # when named themselves, and a .git inside them is still never entered.
    (project / "build" / "env" / ".git").mkdir()
    (project / "build" / "env" / ".git" / "HEAD").write_text("NEEDLE head\n")
    assert files_in(GrepTool(project).execute(pattern="NEEDLE", path="build/env")) == {"build/env/lib.py"}


# --------------------------------------------------------------------------- sandbox and sensitive files


@pytest.mark.parametrize("tool", ["grep", "search_code", "find_files", "list_files"])
def test_an_ignored_link_out_is_still_refused(project: Path, outside: Path, tool: str) -> None:
    (project / "cache").symlink_to(outside, target_is_directory=True)
    (project / ".gitignore").write_text("cache\nbuild/\n")
    (project / "build" / "out").symlink_to(outside, target_is_directory=True)
    (project / "build" / "secret.txt").symlink_to(outside / "secret.txt")
    os.link(outside / "secret.txt", project / "build" / "hard.txt")
    tools = {"grep": GrepTool, "search_code": SearchCodeTool, "find_files": FindFilesTool}
    pattern = {"grep": "TOP", "search_code": "TOP", "find_files": "*"}
    for path in ["cache", "cache/secret.txt", "build/out", "build/secret.txt", "build/hard.txt"]:
        if tool == "list_files":
            result = ListFilesTool(project).execute(path=path, recursive=True)
        else:
            result = tools[tool](project).execute(pattern=pattern[tool], path=path)
        assert not result.success, (path, result.output)
        assert "TOP-SECRET" not in result.output + (result.error or "")
    if tool == "list_files":
        shown = ListFilesTool(project).execute(path="build", recursive=True).output
        assert "build/out" not in shown and "build/secret.txt" not in shown
    else:
        result = tools[tool](project).execute(pattern=pattern[tool], path="build")
        assert "TOP-SECRET" not in result.output and "build/out/" not in result.output
        assert "build/secret.txt" not in result.output


def engine_for(workspace: Path, sensitive: list[str]):  # type: ignore[no-untyped-def]
    config = AppConfig.model_validate(
        {"workspace": {"root": str(workspace)}, "guardrails": {"sensitive_files": sensitive}}
    )
    return build_engine(config, mode="yolo", confirmer=ScriptedConfirmer(default="y"))


def test_sensitive_files_in_a_named_ignored_folder_stay_withheld(project: Path) -> None:
    (project / "data" / ".env").write_text("NEEDLE=hunter2\n")
    (project / "data" / "secrets").mkdir()
    (project / "data" / "secrets" / "key.txt").write_text("NEEDLE private\n")
    engine = engine_for(project, [".env", "data/secrets"])
    for name, args in [
        ("grep", {"pattern": "NEEDLE", "path": "data"}),
        ("search_code", {"pattern": "NEEDLE", "path": "data", "file_pattern": "*"}),
    ]:
        result = engine.execute_tool_call(name, args)
        text = result.to_model_text()
        assert "hunter2" not in text and "private" not in text, name
        assert "data/clean.csv" in result.output and "withheld" in result.output, name
    for name, args in [
        ("grep", {"pattern": "NEEDLE", "path": "data/.env"}),
        ("grep", {"pattern": "NEEDLE", "path": "data/secrets"}),
        ("search_code", {"pattern": "NEEDLE", "path": "data/secrets"}),
        ("list_files", {"path": "data/secrets"}),
        ("find_files", {"pattern": "*", "path": "data/secrets"}),
    ]:
        result = engine.execute_tool_call(name, args)
        assert not result.success and "sensitive file" in (result.error or ""), (name, args)


def test_a_sensitive_git_folder_named_is_refused(project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("url = https://user:NEEDLE@example.com\n")
    engine = engine_for(project, [".git"])
    for name, args in [
        ("grep", {"pattern": "NEEDLE", "path": ".git"}),
        ("search_code", {"pattern": "NEEDLE", "path": ".git", "file_pattern": "*"}),
        ("list_files", {"path": ".git"}),
    ]:
        result = engine.execute_tool_call(name, args)
        assert not result.success and "sensitive file" in (result.error or ""), name
    result = engine.execute_tool_call("grep", {"pattern": "NEEDLE", "path": "."})
    assert ".git" not in result.output and files_in(result) == {"src/app.py"}


# --------------------------------------------------------------------------- the walk against rg's file list

_RULES = [
    *("*.py", "!keep.py", "build/", "*.log", "!*.log", "[ab]*", "c?", "build", "raw/", "!build/"),
    *("top/", "!a/", "**/x", "data", "*/", "**/", "!*/", "**/x/**", "data/**", "data/*", "a/**/*"),
    *("/top", "a/**/b", "data/raw", "a/*.py", "!data/raw/", "data/**/"),
]
# rg 14.1 misreads rules with an inner '/' in a parent folder's .gitignore when given a subfolder
# (BurntSushi/ripgrep#2778): trees whose named folder lies below such a rule are compared from the top only.
_NO_INNER_SLASH = [rule for rule in _RULES if "/" not in rule.rstrip("/")]
#: rg reads only the .gitignore files: no global excludes file, no .ignore or .rgignore.
_RG_OWN_RULES_ONLY = ["--no-ignore-global", "--no-ignore-dot"]
_NAMES = ["a", "b", "build", "data", "raw", "keep.py", "x.log", "c1", "top", "x", "m.py"]

_paths = st.lists(
    st.lists(st.sampled_from(_NAMES), min_size=1, max_size=4).map("/".join), min_size=1, max_size=10
)


@pytest.mark.skipif(find_rg() is None, reason="rg is not installed")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A later `!*/` re-includes the folders `**/x/**` ignored (the last matching rule wins, also for a folder
# rule), so the nested `!*.log` shows x/y/c.log; the walk once ranked the folder rule below `**/x/**`.
@example(paths=["x/y/c.log"], top_rules=["**/x/**", "!*/"], nested_rules=["!*.log"], nested_at=0)
@given(
    paths=_paths,
    top_rules=st.lists(st.sampled_from(_RULES), min_size=1, max_size=4),
    nested_rules=st.lists(st.sampled_from(_RULES), max_size=3),
    nested_at=st.integers(min_value=0),
)
def test_the_walk_lists_what_rg_lists(
    paths: list[str], top_rules: list[str], nested_rules: list[str], nested_at: int
) -> None:
    rg = find_rg()
    assert rg is not None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        folders = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
        for rel in set(paths) - folders:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("x\n")
        (root / ".gitignore").write_text("\n".join(top_rules) + "\n")
        if folders and nested_rules:
            nested = sorted(folders)[nested_at % len(folders)]
            (root / nested / ".gitignore").write_text("\n".join(nested_rules) + "\n")
        starts = ["."]
        if all(rule in _NO_INNER_SLASH for rule in top_rules):
            starts += sorted(f for f in folders if "/" not in f)  # named folders, ignored or not
        for start in starts:
            ours = sorted(rel for _p, rel, kind in scan(root, (root / start).resolve()) if kind == "file")
            listed = subprocess.run(
                [rg, "--files", "--no-config", "--hidden", "--no-require-git", *_RG_OWN_RULES_ONLY, start],
                cwd=root,
                capture_output=True,
                text=True,
                check=False,
            )
            assert listed.returncode in (0, 1), listed.stderr
            theirs = sorted(line.removeprefix("./") for line in listed.stdout.splitlines())
            assert ours == theirs, start
