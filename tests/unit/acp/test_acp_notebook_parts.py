"""The parts of the ACP agent's notebook-kernel connection that need no server: which notebook a prompt
attaches, which servers the runtime folder lists, and the bridged tools' answers to bad arguments
(checked before anything is sent to a kernel)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import EmbeddedResourceContentBlock, ResourceContentBlock, TextResourceContents

from architect_nb.acp.kernel_tools import bridged_kernel_tools
from architect_nb.acp.notebook_kernel import (
    NotebookKernel,
    ServerInfo,
    connect_notebook_kernel,
    jupyter_servers,
    notebook_in_prompt,
)


def link(uri: str, mime: str | None = None) -> ResourceContentBlock:
    return ResourceContentBlock(type="resource_link", uri=uri, name=Path(uri).name, mime_type=mime)


def test_the_prompts_last_notebook_is_the_one_taken_from_a_file_uri_or_a_relative_path(
    tmp_path: Path,
) -> None:
    spaced = tmp_path / "my work" / "a b.ipynb"
    blocks: list[Any] = [
        text_block("fix it"),
        link((tmp_path / "notes.txt").as_uri(), "text/plain"),
        link(spaced.as_uri(), "application/x-ipynb+json"),
    ]
    assert notebook_in_prompt(blocks, tmp_path) == spaced  # %20 decoded
    assert (
        notebook_in_prompt([*blocks, link("sub/other.ipynb")], tmp_path) == tmp_path / "sub" / "other.ipynb"
    )
    assert notebook_in_prompt([text_block("x"), link((tmp_path / "data.csv").as_uri())], tmp_path) is None
    embedded = EmbeddedResourceContentBlock(
        type="resource", resource=TextResourceContents(uri=spaced.as_uri(), text="{}")
    )
    assert notebook_in_prompt([embedded], tmp_path) == spaced


def test_the_runtime_folder_lists_live_servers_and_skips_stale_or_broken_files(tmp_path: Path) -> None:
    mine = {"url": "http://127.0.0.1:1/", "token": "t", "root_dir": str(tmp_path), "pid": os.getppid()}
    other = {**mine, "url": "http://127.0.0.1:2/", "pid": 1}
    (tmp_path / "jpserver-1.json").write_text(json.dumps(other))
    (tmp_path / "jpserver-9.json").write_text(json.dumps(mine))
    (tmp_path / "jpserver-2.json").write_text("{half written")
    (tmp_path / "jpserver-3.json").write_text(json.dumps({"url": "x"}))  # no root_dir, no pid
    servers = jupyter_servers(tmp_path)
    assert [s.url for s in servers] == [mine["url"], other["url"]]  # the parent (what started us) first
    assert all(s.runtime_dir == tmp_path for s in servers)


def test_a_notebook_outside_every_server_or_whose_server_is_gone_has_no_kernel(tmp_path: Path) -> None:
    gone = ServerInfo("http://127.0.0.1:9/", "", tmp_path / "served", 1, tmp_path)
    (tmp_path / "served").mkdir()
    assert connect_notebook_kernel(tmp_path / "elsewhere.ipynb", [gone]) == (
        "no running Jupyter server serves that folder"
    )
    assert connect_notebook_kernel(tmp_path / "served" / "a.ipynb", [gone]) == (
        "the Jupyter server serving it did not answer"
    )


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("run_python", {}, "code: Field required"),
        ("run_python", {"code": 5}, "code: Input should be a valid string"),
        ("run_python", {"code": "x", "extra": 1}, "extra: Extra inputs are not permitted"),
        ("inspect_variable", {"name": ["a"]}, "name: Input should be a valid string"),
        ("run_python", {"code": "x" * 1_000_001}, "over 1,000,000 characters"),
        ("list_variables", {}, "not connected any more"),  # valid: it reaches the (closed) kernel
        ("inspect_variable", {"name": "'); import os; os._exit(1) #"}, "not connected any more"),
    ],
)
def test_bridged_tools_answer_bad_arguments_with_an_error_and_never_raise(
    tool: str, arguments: dict[str, Any], says: str, tmp_path: Path
) -> None:
    kernel = NotebookKernel(
        ServerInfo("http://127.0.0.1:9/", "", tmp_path, 1, tmp_path), "a.ipynb", "k", tmp_path / "k.json"
    )
    tools = {t.name: t for t in bridged_kernel_tools(kernel, "run", str(tmp_path), 5.0)}
    assert sorted(tools) == ["inspect_variable", "list_variables", "run_python"]
    assert tools["run_python"].sensitive and tools["run_python"].runs_code
    assert not tools["list_variables"].sensitive
    result = tools[tool].execute(**arguments)
    assert not result.success and says in (result.error or ""), result.error


def test_a_hostile_argument_is_sent_as_data_never_as_code() -> None:
    """The expression the kernel evaluates carries the arguments as a JSON string literal."""
    import ast

    captured: list[str] = []

    class Recording(NotebookKernel):
        def _evaluate(self, expression: str, seconds: float) -> str:
            captured.append(expression)
            return json.dumps({"success": True, "output": "ok", "error": None, "metadata": {}})

    kernel = Recording(ServerInfo("u", "", Path("/"), 1, Path("/")), "a.ipynb", "k", Path("/k"))
    hostile = "'); __import__('os')._exit(1) #\"\\"
    assert kernel.call("r", "inspect_variable", {"name": hostile}, "/ws'); x=('", 5.0).output == "ok"
    [expression] = captured
    call = ast.parse(expression, mode="eval").body
    assert isinstance(call, ast.Call) and all(isinstance(a, ast.Call | ast.Constant) for a in call.args)
    loads = call.args[2]
    assert isinstance(loads, ast.Call) and json.loads(ast.literal_eval(loads.args[0])) == {"name": hostile}
    assert ast.literal_eval(call.args[3]) == "/ws'); x=('"
