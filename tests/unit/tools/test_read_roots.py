"""`workspace.read_roots`: data folders outside the workspace that the tools may read, list and search, and
nothing may change; everything else outside stays unreachable. Real files, real tools, the real engine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from architect_nb.config.loader import ConfigError, load_config
from architect_nb.config.schema import AppConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.paths.validators import PathTraversalError, validate_path
from architect_nb.tools.base import ToolResult

READ_ONLY = "read-only data folder"


@pytest.fixture
def data(workspace: Path) -> Path:
    """A read root beside the workspace, reached from it through the symlink `ws/data`."""
    folder = workspace.parent / "datasets"
    (folder / "sub").mkdir(parents=True)
    (folder / "train.csv").write_text("x,y\n1,2\n")
    (folder / "sub" / "notes.txt").write_text("needle in the data\n")
    (folder / ".env").write_text("API_KEY=hunter2\n")
    (workspace / "data").symlink_to(folder)
    (workspace / "elsewhere").symlink_to(workspace.parent / "outside")
    (workspace / "mine.txt").write_text("mine\n")
    return folder


def engine_for(workspace: Path, data: Path, *, sandbox: str = "off", **guardrails: Any) -> ExecutionEngine:
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(workspace), "read_roots": [str(data)], "allow_delete": True},
            "guardrails": guardrails,
            "sandbox": {"mode": sandbox},
        }
    )
    return build_engine(config, mode="yolo", confirmer=ScriptedConfirmer(default="y"))


def call(engine: ExecutionEngine, tool: str, **args: Any) -> ToolResult:
    return engine.execute_tool_call(tool, args)


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"/" for p in sorted(folder.rglob("*"))
    }


# ------------------------------------------------------------------ reading


@pytest.mark.parametrize("how", ["absolute", "symlink"])
def test_read_file_in_a_read_root(workspace: Path, data: Path, how: str) -> None:
    path = str(data / "train.csv") if how == "absolute" else "data/train.csv"
    result = call(engine_for(workspace, data), "read_file", path=path)
    assert result.success, result.error
    assert result.output == "x,y\n1,2\n"
    assert result.metadata["path"] == str(data / "train.csv")


@pytest.mark.parametrize("path", ["{data}", "data", "data/sub"])
def test_list_files_in_a_read_root(workspace: Path, data: Path, path: str) -> None:
    result = call(engine_for(workspace, data), "list_files", path=path.format(data=data), recursive=True)
    assert result.success, result.error
    assert f"read-only data folder {data}" in result.output
    assert "sub/notes.txt" in result.output


@pytest.mark.parametrize("tool", ["grep", "search_code"])
@pytest.mark.parametrize("path", ["{data}", "data"])
def test_search_in_a_read_root(workspace: Path, data: Path, tool: str, path: str) -> None:
    args: dict[str, Any] = {"pattern": "needle", "path": path.format(data=data)}
    if tool == "search_code":
        args["file_pattern"] = "*"
    result = call(engine_for(workspace, data), tool, **args)
    assert result.success, result.error
    assert "sub/notes.txt:1:" in result.output
    assert str(data) in result.output


def test_find_files_in_a_read_root(workspace: Path, data: Path) -> None:
    result = call(engine_for(workspace, data), "find_files", pattern="*.csv", path="data")
    assert result.success, result.error
    assert "train.csv" in result.output


def test_default_search_stays_in_the_workspace(workspace: Path, data: Path) -> None:
    engine = engine_for(workspace, data)
    grep = call(engine, "grep", pattern="needle")
    assert grep.success
    assert "notes.txt" not in grep.output
    listing = call(engine, "list_files", recursive=True)
    assert "notes.txt" not in listing.output


def test_sensitive_files_in_a_read_root_stay_unreadable(workspace: Path, data: Path) -> None:
    engine = engine_for(workspace, data, sensitive_files=[".env"])
    for path in (str(data / ".env"), "data/.env"):
        result = call(engine, "read_file", path=path)
        assert not result.success
        assert "sensitive" in (result.error or "")
        assert "hunter2" not in result.output
    grep = call(engine, "grep", pattern="API_KEY", path="data")
    assert "hunter2" not in grep.output


# ------------------------------------------------------------------ writing is refused


WRITES: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": "data/new.txt", "content": "x\n"}),
    ("write_file", {"path": "{data}/train.csv", "content": "x\n"}),
    ("write_file", {"path": "data/train.csv", "content": "more\n", "mode": "append"}),
    ("edit_file", {"path": "data/train.csv", "old_str": "1,2", "new_str": "3,4"}),
    ("apply_patch", {"path": "{data}/train.csv", "patch": "@@ -1,2 +1,2 @@\n x,y\n-1,2\n+3,4\n"}),
    ("delete_file", {"path": "data/train.csv"}),
    ("delete_file", {"path": "{data}/sub/notes.txt"}),
]


@pytest.mark.parametrize(("tool", "args"), WRITES)
def test_writes_into_a_read_root_are_refused(
    workspace: Path, data: Path, tool: str, args: dict[str, Any]
) -> None:
    before = files_of(data)
    filled = {k: v.format(data=data) if isinstance(v, str) else v for k, v in args.items()}
    result = call(engine_for(workspace, data), tool, **filled)
    assert not result.success
    assert READ_ONLY in (result.error or "")
    assert "write inside the workspace instead" in (result.error or "")
    assert files_of(data) == before
    assert (workspace / "data").is_symlink()


def test_a_patch_naming_a_read_root_file_changes_only_its_path(workspace: Path, data: Path) -> None:
    before = files_of(data)
    patch = f"--- {data}/train.csv\n+++ {data}/train.csv\n@@ -1 +1 @@\n-mine\n+yours\n"
    result = call(engine_for(workspace, data), "apply_patch", path="mine.txt", patch=patch)
    assert result.success, result.error
    assert (workspace / "mine.txt").read_text() == "yours\n"
    assert files_of(data) == before


def test_notebook_edits_in_a_read_root_are_refused(workspace: Path, data: Path) -> None:
    nb = '{"cells": [{"cell_type": "code", "id": "a", "metadata": {}, "source": "1", "outputs": [], '
    nb += '"execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    (data / "nb.ipynb").write_text(nb)
    engine = engine_for(workspace, data)
    read = call(engine, "read_notebook", path="data/nb.ipynb")
    assert read.success, read.error
    edit = call(engine, "edit_notebook_cell", path="data/nb.ipynb", cell_id="a", old_str="1", new_str="2")
    assert not edit.success
    assert READ_ONLY in (edit.error or "")
    assert (data / "nb.ipynb").read_text() == nb


# ------------------------------------------------------------------ commands


@pytest.mark.parametrize(
    "command",
    [
        "cp mine.txt {data}/copy.txt",
        "echo x > {data}/f",
        "cp mine.txt data/copy.txt",
        "rm -r {data}/sub",
        "mv {data}/train.csv moved.csv",
        "rm -r {data}/..",
    ],
)
def test_commands_naming_a_read_root_are_refused_without_the_sandbox(
    workspace: Path, data: Path, command: str
) -> None:
    before = files_of(data)
    result = call(engine_for(workspace, data), "run_command", command=command.format(data=data))
    assert not result.success
    assert READ_ONLY in (result.error or "")
    assert files_of(data) == before


def test_commands_writing_in_the_workspace_still_run(workspace: Path, data: Path) -> None:
    result = call(engine_for(workspace, data), "run_command", command="cp data/train.csv copy.csv")
    assert result.success, result.error
    assert (workspace / "copy.csv").read_text() == "x,y\n1,2\n"


def test_the_sandbox_shows_read_roots_read_only(workspace: Path, data: Path) -> None:
    from tests.support.sandbox import require_bwrap

    require_bwrap()
    engine = engine_for(workspace, data, sandbox="required")
    read = call(engine, "run_command", command="cat data/train.csv && ls " + str(data / "sub"))
    assert read.success, read.error
    assert "1,2" in read.output
    assert "notes.txt" in read.output
    before = files_of(data)
    # Unnamed writes (a variable) get past the parse; the sandbox stops them.
    write = call(engine, "run_command", command=f'D={data}; echo x > "$D/f"; touch "$D/train.csv"')
    assert not write.success
    assert "Read-only file system" in write.output
    assert files_of(data) == before


# ------------------------------------------------------------------ everything else stays outside


@pytest.mark.parametrize(
    "path",
    ["elsewhere/secret.txt", "{outside}/secret.txt", "{data}/../outside/secret.txt", "data/../../outside"],
)
def test_outside_the_read_roots_stays_unreachable(workspace: Path, data: Path, path: str) -> None:
    engine = engine_for(workspace, data)
    filled = path.format(outside=workspace.parent / "outside", data=data)
    for tool in ("read_file", "list_files", "grep"):
        args = {"path": filled, "pattern": "TOP"} if tool == "grep" else {"path": filled}
        result = call(engine, tool, **args)
        assert not result.success, tool
        assert "escapes the workspace" in (result.error or "")
        assert "TOP-SECRET" not in result.output


def test_a_symlink_inside_a_read_root_out_of_it_is_refused(workspace: Path, data: Path) -> None:
    (data / "link").symlink_to(workspace.parent / "outside")
    engine = engine_for(workspace, data)
    result = call(engine, "read_file", path=str(data / "link" / "secret.txt"))
    assert not result.success
    assert "TOP-SECRET" not in result.output
    listing = call(engine, "list_files", path=str(data), recursive=True)
    assert "secret" not in listing.output


def test_a_hard_link_in_a_read_root_is_refused(workspace: Path, data: Path) -> None:
    os.link(workspace.parent / "outside" / "secret.txt", data / "hard.txt")
    result = call(engine_for(workspace, data), "read_file", path="data/hard.txt")
    assert not result.success
    assert "hard link" in (result.error or "")


@pytest.mark.parametrize("path", ["data/\x00x", "data/" + "a" * 5000, "data/\u202etxt", "~/x"])
def test_hostile_paths_get_clean_errors(workspace: Path, data: Path, path: str) -> None:
    result = call(engine_for(workspace, data), "read_file", path=path)
    assert not result.success
    assert result.error


def test_validate_path_reads_but_never_writes_a_read_root(workspace: Path, data: Path) -> None:
    roots = (data,)
    assert validate_path("data/train.csv", workspace, read_roots=roots) == data / "train.csv"
    with pytest.raises(PathTraversalError, match=READ_ONLY):
        validate_path("data/train.csv", workspace, read_roots=roots, write=True)
    with pytest.raises(PathTraversalError, match="escapes the workspace"):
        validate_path("data/train.csv", workspace)  # without read roots, as before


# ------------------------------------------------------------------ config


def _load(workspace: Path, *roots: str) -> AppConfig:
    return load_config(None, {"workspace.root": str(workspace), "workspace.read_roots": list(roots)})


def test_config_accepts_an_existing_folder_beside_the_workspace(workspace: Path, data: Path) -> None:
    assert _load(workspace, str(data)).workspace.read_roots == [data]


@pytest.mark.parametrize(
    ("root", "said"),
    [
        ("/", "file system's root"),
        ("{parent}", "holds the workspace"),
        ("{ws}", "holds the workspace"),
        ("{ws}/inner", "inside the workspace"),
        ("relative/folder", "must be absolute"),
        ("{parent}/missing", "not an existing folder"),
    ],
)
def test_config_refuses_bad_read_roots(workspace: Path, data: Path, root: str, said: str) -> None:
    (workspace / "inner").mkdir()
    with pytest.raises(ConfigError, match=said):
        _load(workspace, root.format(parent=workspace.parent, ws=workspace))


def test_config_refuses_a_read_root_holding_the_home_folder(
    workspace: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The home folder holds credentials (~/.ssh, ~/.aws) that no tool may read: neither it nor a folder
    holding it can be a read root, while a data folder inside it can."""
    home = data / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / "datasets").mkdir()
    monkeypatch.setenv("HOME", str(home))
    for root in (home, data):
        with pytest.raises(ConfigError, match="holds your home folder"):
            _load(workspace, str(root))
    assert _load(workspace, "~/datasets").workspace.read_roots == [home / "datasets"]


# ------------------------------------------------------------------ the notebook's options


def test_cell_option_read_root_is_repeatable() -> None:
    from architect_nb.notebook.magics import parse_cell_line

    args = parse_cell_line("--read-root /a --read-root ~/b --workspace /w")
    assert args.read_roots == (Path("/a"), Path("~/b"))
    assert parse_cell_line("").read_roots == ()


def test_session_adds_cell_read_roots_and_status_lists_them(
    workspace: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from architect_nb.notebook.magics import CellArgs, LineCommand
    from architect_nb.notebook.state import Session

    monkeypatch.chdir(workspace)
    more = workspace.parent / "more"
    more.mkdir()
    session = Session()
    session.handle(LineCommand(name="config", args=(f"workspace.read_roots=[{data}]",)))
    assert session.config().workspace.read_roots == [data]
    cell = CellArgs(workspace=workspace, read_roots=(more,))
    assert session.config(cell).workspace.read_roots == [data, more]
    status = str(session.handle(LineCommand(name="status")).text)
    assert f"read roots (read-only): {data}" in status
    with pytest.raises(ConfigError, match="holds the workspace"):
        session.config(CellArgs(workspace=workspace, read_roots=(workspace.parent,)))


def test_the_model_is_told_the_read_roots_in_its_system_prompt(workspace: Path, data: Path) -> None:
    from architect_nb.agent.factory import create_loop
    from architect_nb.agent.models.model_reply import LLMResponse

    class Listener:
        """A model client that keeps the system prompt it is sent."""

        model = "listener"
        system = ""

        def complete(self, messages: Any, tools: Any, **_: Any) -> LLMResponse:
            self.system = str(messages[0]["content"])
            return LLMResponse(content="seen")

        def context_window(self) -> int:
            return 8000

        def supports_images(self) -> bool:
            return False

    told = f"Read-only data folders (read, list and search them by absolute path; never write): {data}"
    for roots in ([str(data)], []):
        config = load_config(None, {"workspace.root": str(workspace), "workspace.read_roots": roots})
        listener = Listener()
        assert create_loop(config, llm=listener).run("look").final_text == "seen"
        assert (told in listener.system) is bool(roots)
