"""rg walking the tree itself sees the files the Python walk sees, and the tools answer the same either way.

Trees are generated from a catalog of awkward paths (ignore files in subfolders, negations, anchored and
folder rules, `.git/info/exclude`, hidden files, skipped folders, virtualenvs, sensitive files, a state
folder, symlinks in and out of the workspace, odd names) and searched with rg's walk, cold and with a kept
Python walk, and with the Python walk alone (`rg_walk=False`); this repository too.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from architect_nb.tools.base import ToolResult
from architect_nb.tools.search.collect import collect_files, file_filter
from architect_nb.tools.search.programs import find_rg
from architect_nb.tools.search.rg_walk import rg_listing, walk_args
from architect_nb.tools.search.scope import SearchScope
from architect_nb.tools.search.search_tools import FindFilesTool, GrepTool, SearchCodeTool
from architect_nb.tools.search.walk_cache import clear_walk_cache

RG = find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="rg is missing: pip install ripgrep")

REPO = Path(__file__).resolve().parents[3]

#: Paths a tree may hold, each with what it says ("hit" is what the searches look for).
CATALOG = [
    "a.txt",
    "top.txt",
    "keep.log",
    "x.log",
    ".hidden",
    ".env",
    "id.key",
    "README",
    "nb.ipynb",
    "sub/a.txt",
    "sub/b.log",
    "sub/keep.log",
    "sub/.env",
    "sub/deep/c.txt",
    "sub/deep/d.key",
    "sub/gen/h.txt",
    "out/o.txt",
    "out/keep.log",
    "data/x/y.txt",
    "build/b.txt",
    "gen/g.txt",
    "secrets/s.txt",
    "a/.env/inner.txt",
    "config/prod1.yaml",
    "config/dev.yaml",
    "node_modules/m.txt",
    "sub/node_modules/n.txt",
    "__pycache__/p.txt",
    "env/pyvenv.cfg",
    "env/lib/v.txt",
    "conda/conda-meta/history",
    "conda/c.txt",
    "state/run/manifest.json",
    "odd name/é q'\"#!.txt",
    "-dash/x.txt",
    "[br]/c{1}.txt",
    "new\nline.txt",
    "Upper/CASE.TXT",
]
CONTENTS = ["hit\n", "hit hit\nno\nhit\n", "nothing\n", "hit\x00binary\n", "hit\n" * 7, ""]
RULES = [
    "*.log",
    "!keep.log",
    "out/",
    "/top.txt",
    "data/**",
    "build",
    "sub/*.txt",
    "**/gen/",
    "deep/",
    "!sub/a.txt",
    "*.yaml",
    "# a comment",
    "*.cfg",
    "conda-meta",
    "odd*",
    "[br]",
]
SENSITIVE = [".env", "*.key", "secrets/*", "config/prod*.yaml", "*secret*", "upper"]
STARTS = [".", "sub", "out", "config", "sub/deep", "odd name"]
PATTERNS = ["*", "*.txt", "*.{txt,log}", "sub/*.txt", "[a-c]*"]


def notebook(text: str) -> str:
    return '{"cells": [{"cell_type": "code", "source": ["x = \\"' + text.strip() + '\\"\\n"]}]}'


def build(
    root: Path,
    outside: Path,
    paths: list[str],
    contents: list[int],
    ignores: dict[str, list[str]],
    exclude: list[str],
    links: bool,
) -> None:
    for i, rel in enumerate(paths):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = CONTENTS[contents[i % len(contents)]]
        path.write_text(notebook(text) if rel.endswith(".ipynb") else text)
    for folder, rules in ignores.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / ".gitignore").write_text("\n".join(rules) + "\n")
    if exclude:
        (root / ".git" / "info").mkdir(parents=True)
        (root / ".git" / "info" / "exclude").write_text("\n".join(exclude) + "\n")
        (root / ".git" / "HEAD").write_text("hit\n")
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / "nested").mkdir(exist_ok=True)
    (root / "sub" / "nested" / ".git").mkdir(exist_ok=True)  # a repository inside: rules still apply
    (root / "sub" / "nested" / "n.log").write_text("hit\n")
    if links:
        (outside / "secret.txt").write_text("hit outside\n")
        (root / "out_link.txt").symlink_to(outside / "secret.txt")
        (root / "out_dir").symlink_to(outside, target_is_directory=True)
        if (root / "a.txt").exists():
            (root / "in_link.txt").symlink_to(root / "a.txt")
        os.mkfifo(root / "fifo")
    settle(root)


def settle(root: Path) -> None:
    """Date every folder back, so that a walk of the tree may be kept (`walk_cache` distrusts fresh ones)."""
    past = time.time() - 60
    for folder, _dirs, files in os.walk(root):
        for name in [".", *files]:
            os.utime(os.path.join(folder, name), (past, past), follow_symlinks=False)


def python_files(root: Path, start: Path, pattern: str, scope: SearchScope) -> list[str]:
    clear_walk_cache()
    files, cut = collect_files(
        root, start, pattern, recursive=True, deadline=time.monotonic() + 60, scope=scope
    )
    assert not cut
    return [rel for _path, rel in files]


def rg_files(root: Path, start: Path, pattern: str, scope: SearchScope, *, warm: bool) -> list[str] | None:
    if not warm:
        clear_walk_cache()
    assert RG is not None
    base = walk_args(RG, root, start, scope)
    if base is None:
        return None
    select = file_filter(root, start, pattern) or (lambda rel: True)
    listing = rg_listing(
        base, ["--files"], root, start, time.monotonic() + 60, select=select, scope=scope or None
    )
    assert not listing.timed_out
    return [rel for rel, _count in listing.files]


def comparable(result: ToolResult) -> tuple[bool, str, dict[str, object]]:
    metadata = {k: v for k, v in result.metadata.items() if k not in ("files_read", "backend")}
    return result.success, result.output, metadata


def without_count(answer: tuple[bool, str, dict[str, object]]) -> tuple[bool, str, dict[str, object]]:
    """An answer without its count of files searched."""
    success, text, metadata = answer
    text = re.sub(r"\(([\d,]+) files? searched\)", "(N files searched)", text)
    return success, text, {k: v for k, v in metadata.items() if k != "files_searched"}


def same_answers(
    root: Path, start: str, pattern: str, sensitive: list[str], hidden: list[str], venv: bool = False
) -> None:
    """Every tool gives the same answer with rg walking (cold, then warm) and with the Python walk.

    With a virtualenv in the tree, a cold rg walk may count its files as searched (see `rg_walk`): there
    the count alone may differ."""
    opts = {"sensitive_files": sensitive, "hidden_folders": hidden}
    calls = [
        (GrepTool, {"pattern": "hit", "path": start, "file_pattern": pattern, "max_results": 3}),
        (GrepTool, {"pattern": "HIT", "path": start, "case_sensitive": False, "max_results": 100}),
        (GrepTool, {"pattern": 'x = "hit', "path": start}),  # JSON escapes the quote in the notebook
        (SearchCodeTool, {"pattern": r"hit\b", "path": start, "file_pattern": pattern, "max_results": 4}),
        (SearchCodeTool, {"pattern": r"^\w+$", "path": start, "file_pattern": "*", "context_lines": 1}),
        (SearchCodeTool, {"pattern": r"never-there", "path": start, "file_pattern": pattern}),
    ]
    for tool, args in calls:
        clear_walk_cache()
        reference = comparable(tool(root, rg_walk=False, **opts).execute(**args))  # type: ignore[arg-type]
        warm = comparable(tool(root, **opts).execute(**args))  # type: ignore[arg-type]
        clear_walk_cache()
        cold = comparable(tool(root, **opts).execute(**args))  # type: ignore[arg-type]
        if venv:
            assert without_count(cold) == without_count(reference), (tool, args)
        else:
            assert cold == reference, (tool, args)
        assert warm == reference, (tool, args)
        check_nothing_hidden(reference[1], sensitive, bool(hidden))


def check_nothing_hidden(output: str, sensitive: list[str], state: bool) -> None:
    for line in output.splitlines():
        assert "outside" not in line and not line.startswith(("out_link", "out_dir"))
        assert not (state and line.startswith("state/"))
        if ".env" in sensitive:
            assert not line.startswith((".env", "sub/.env", "a/.env"))
        if "*.key" in sensitive:
            assert ".key:" not in line


EXAMPLES = 25


@pytest.mark.slow  # left out of `make test-unit`: rg walks hundreds of random trees
def test_rg_walk_sees_the_python_walks_files() -> None:
    """rg's walk lists what the Python walk lists, in generated trees, cold and with a kept walk. A walk rg
    declines compares nothing, so the walks rg really did are counted: in these trees it has no reason to
    decline, and the test fails when it walked fewer than 9 in 10 times."""
    walks: list[bool] = []  # one per walk asked of rg: whether rg walked (False: it declined)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        paths=st.lists(st.sampled_from(CATALOG), min_size=1, max_size=18, unique=True),
        contents=st.lists(st.integers(0, len(CONTENTS) - 1), min_size=1, max_size=5),
        ignores=st.dictionaries(
            st.sampled_from(["", "sub", "out", "sub/deep", "config"]),
            st.lists(st.sampled_from(RULES), min_size=1, max_size=4),
            max_size=3,
        ),
        exclude=st.lists(st.sampled_from(RULES), max_size=2),
        sensitive=st.lists(st.sampled_from(SENSITIVE), max_size=3, unique=True),
        state=st.booleans(),
        links=st.booleans(),
        start=st.sampled_from(STARTS),
        pattern=st.sampled_from(PATTERNS),
    )
    def compare(
        paths: list[str],
        contents: list[int],
        ignores: dict[str, list[str]],
        exclude: list[str],
        sensitive: list[str],
        state: bool,
        links: bool,
        start: str,
        pattern: str,
    ) -> None:
        with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as out:
            root = Path(os.path.realpath(tmp))
            build(root, Path(os.path.realpath(out)), paths, contents, ignores, exclude, links)
            hidden = [str(root / "state")] if state else []
            scope = SearchScope(root, sensitive, hidden)
            folder = root / start
            assume(folder.is_dir() and not scope.hides(start))  # another example instead, not a pass
            reference = python_files(root, folder, pattern, scope)
            for warm in (False, True):
                listed = rg_files(root, folder, pattern, scope, warm=warm)
                walks.append(listed is not None)
                if listed is not None:
                    assert listed == reference, (warm, listed, reference)
            assert not any(
                rel.startswith(("out_link", "out_dir", "fifo", *(("state/",) if state else ())))
                for rel in reference
            )
            venv = any(rel.startswith(("env/", "conda/conda-meta")) for rel in paths)
            same_answers(root, start, pattern, sensitive, hidden, venv)

    compare()
    assert walks.count(True) >= 0.9 * 2 * EXAMPLES, f"rg walked {walks.count(True)} of {len(walks)} times"


def test_this_repository_is_walked_alike() -> None:
    scope = SearchScope(REPO, [".env", "*.pem"], [str(REPO / ".architect-state")])
    reference = python_files(REPO, REPO, "*", scope)
    assert rg_files(REPO, REPO, "*", scope, warm=False) == reference
    assert rg_files(REPO, REPO / "architect_nb", "*.py", scope, warm=False) == python_files(
        REPO, REPO / "architect_nb", "*.py", scope
    )
    for tool, args in [
        (GrepTool, {"pattern": "def execute", "max_results": 20}),
        (GrepTool, {"pattern": "ripgrep", "case_sensitive": False, "file_pattern": "*.md"}),
        (SearchCodeTool, {"pattern": r"class \w+Tool\(", "file_pattern": "*.py", "max_results": 30}),
    ]:
        clear_walk_cache()
        reference_answer = comparable(tool(REPO, rg_walk=False).execute(**args))
        clear_walk_cache()
        assert comparable(tool(REPO).execute(**args)) == reference_answer, args


def test_the_walks_agree_on_odd_file_names(tmp_path: Path) -> None:
    names = [b"caf\xc3\xa9.txt", b"bad\xff\xfe.txt", b"tab\there.txt", b"new\nline.txt", b"-e", b"\\back.txt"]
    for name in names:
        with open(os.path.join(os.fsencode(tmp_path), name), "wb") as f:
            f.write(b"hit\n")
    scope = SearchScope(tmp_path)
    assert rg_files(tmp_path, tmp_path, "*", scope, warm=False) == python_files(
        tmp_path, tmp_path, "*", scope
    )
    for tool in (GrepTool, SearchCodeTool):
        clear_walk_cache()
        expected = comparable(tool(tmp_path, rg_walk=False).execute(pattern="hit", file_pattern="*"))
        clear_walk_cache()
        assert comparable(tool(tmp_path).execute(pattern="hit", file_pattern="*")) == expected
        assert expected[2]["matches"] == len(names)


def test_a_gitignore_above_the_workspace_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.txt\n")
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("hit\n")
    (root / "sub" / "b.txt").write_text("hit\n")
    for path in (".", "sub"):
        result = GrepTool(root).execute(pattern="hit", path=path)
        assert result.metadata["matches"] == (2 if path == "." else 1), result.output


def test_results_stop_at_the_limit_on_many_hits(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("hit\n" * 200_000)
    (tmp_path / "small.txt").write_text("hit\n")
    result = GrepTool(tmp_path).execute(pattern="hit", max_results=5)
    assert result.metadata["matches"] == 200_001 and result.metadata["shown"] == 5
    assert (
        result.output.splitlines()[-1] == "... 199,996 more matches in 2 files; narrow the pattern or path."
    )


def test_a_walk_cut_by_time_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hit\n")
    for tool in (GrepTool(tmp_path, time_bound=0.0), SearchCodeTool(tmp_path, time_bound=0.0)):
        result = tool.execute(pattern="hit")
        assert result.metadata["timed_out"] and "time bound" in result.output


def test_hidden_paths_are_refused_as_starts(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "x.txt").write_text("hit\n")
    (tmp_path / ".env").write_text("hit\n")
    opts = {"sensitive_files": [".env"], "hidden_folders": [str(tmp_path / "state")]}
    for path in ("state", "state/x.txt", ".env"):
        result = GrepTool(tmp_path, **opts).execute(pattern="hit", path=path)  # type: ignore[arg-type]
        assert not result.success and "not searched" in (result.error or ""), path
    result = FindFilesTool(tmp_path, **opts).execute(pattern="*")  # type: ignore[arg-type]
    assert result.output == "No files match '*' in '.'." or "x.txt" not in result.output
    assert ".env" not in result.output


def test_rg_walks_where_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.tools.search import search_tools

    def no_python_walk(*args: object, **kwargs: object) -> None:
        raise AssertionError("the Python walk was used")

    (tmp_path / "a.py").write_text("hit\n")
    monkeypatch.setattr(search_tools, "collect_files", no_python_walk)
    assert GrepTool(tmp_path).execute(pattern="hit").output == "a.py:1: hit"
    assert SearchCodeTool(tmp_path).execute(pattern=r"h.t").output == "a.py:1: hit"
    assert SearchCodeTool(tmp_path).execute(pattern=r"\w+").output == "a.py:1: hit"


# --------------------------------------------------------------------------- the engine's searches


@pytest.mark.parametrize("with_rg", [True, False])
def test_the_state_folders_and_sensitive_files_never_turn_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_rg: bool
) -> None:
    """build_engine keeps the checkpoints folder, the default state folder and sensitive files out of
    every search, whether rg walks or not."""
    from architect_nb.config.schema import AppConfig
    from architect_nb.execution import build
    from architect_nb.tools.search import code, grep, search_tools

    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setattr(build, "default_checkpoint_dir", lambda: workspace / "state" / "checkpoints")
    if not with_rg:
        for module in (search_tools, grep, code):
            monkeypatch.setattr(module, "find_rg", lambda: None)
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(workspace)},
            "checkpoints": {"dir": str(workspace / "ckpt")},
            "guardrails": {"sensitive_files": [".env", "*.pem"]},
        }
    )
    engine = build.build_engine(config, mode="yolo")
    (workspace / "a.py").write_text("hit\n")
    engine.execute_tool_call("write_file", {"path": "b.py", "content": "hit\n"})  # a snapshot in ckpt/
    for rel in ["ckpt/x/hit.py", "state/checkpoints/hit.py", ".env", "sub/key.pem", "sub/.env"]:
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text("hit = 'secret'\n")
    assert any((workspace / "ckpt").rglob("*")), "the checkpoints folder holds the run"
    answers = [
        engine.execute_tool_call("grep", {"pattern": "hit"}),
        engine.execute_tool_call("grep", {"pattern": "HIT", "case_sensitive": False, "max_results": 1000}),
        engine.execute_tool_call("search_code", {"pattern": "hit", "file_pattern": "*"}),
        engine.execute_tool_call("search_code", {"pattern": r"^\w+", "file_pattern": "*"}),
        engine.execute_tool_call("find_files", {"pattern": "*"}),
    ]
    for result in answers:
        assert result.success, result.error
        lines = [line for line in result.output.splitlines() if not line.startswith("(")]
        assert {line.split(":")[0] for line in lines} <= {"a.py", "b.py", "--"}, result.output
        # The searches never saw them: the guardrails' filter of search output had nothing to withhold.
        assert "secret" not in result.output and "from sensitive files withheld" not in result.output
    assert answers[0].output == "a.py:1: hit\nb.py:1: hit\n(Sensitive files are withheld from searches.)"
    for path in ("ckpt", "state/checkpoints/hit.py", ".env"):
        refused = engine.execute_tool_call("grep", {"pattern": "hit", "path": path})
        assert not refused.success


def test_a_subfolder_under_a_rule_with_a_slash_is_walked_as_git_reads_it(tmp_path: Path) -> None:
    """rg 14.1 walking `sub` applied the root's `sub/*.txt` to `sub/deep/c.txt` too (ripgrep#2778), so a
    grep in `sub` found nothing there; such a walk is the Python walk's."""
    if find_rg() is None:
        pytest.skip("ripgrep is not installed: pip install ripgrep")
    clear_walk_cache()
    (tmp_path / ".gitignore").write_text("sub/*.txt\n")
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "sub" / "a.txt").write_text("hit\n")
    (tmp_path / "sub" / "deep" / "c.txt").write_text("hit\n")
    found = GrepTool(tmp_path).execute(pattern="hit", path="sub")
    assert found.success and "deep/c.txt" in found.output and "a.txt" not in found.output.replace("c.txt", "")
