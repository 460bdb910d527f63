"""Every registered tool that takes a path refuses every kind of escape, and leaves the outside untouched."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from architect_nb.tools.base import BaseTool
from architect_nb.tools.registry import ToolRegistry

# Plausible values for the other required arguments, so that only the path decides the outcome.
FILLERS: dict[str, Any] = {
    "content": "pwned\n",
    "old_str": "TOP-SECRET",
    "new_str": "pwned",
    "patch": "--- a/secret.txt\n+++ b/secret.txt\n@@ -1 +1 @@\n-TOP-SECRET\n+pwned\n",
    "pattern": "TOP",
    "command": "cat secret.txt",
}

HOSTILE = {
    "dotdot": "../outside/secret.txt",
    "dotdot_dir": "..",
    "absolute": "{outside}/secret.txt",
    "absolute_dir": "{outside}",
    "tilde": "~/secret.txt",
    "file_symlink": "file_link",
    "dir_symlink": "dir_link/secret.txt",
    "dir_symlink_itself": "dir_link",
    "dangling_symlink": "dangling",
    "hard_link": "hard.txt",
    "nul": "secret\x00.txt",
    "bidi": "\u202etxt.terces",
}


def path_field(tool: BaseTool) -> str | None:
    fields = tool.args_model.model_fields
    return next((name for name in ("path", "cwd") if name in fields), None)


def build_args(tool: BaseTool, field: str, value: str) -> dict[str, Any]:
    args: dict[str, Any] = {field: value}
    for name, info in tool.args_model.model_fields.items():
        if name != field and info.is_required():
            args[name] = FILLERS.get(name, "x")
    return args


@pytest.fixture
def hostile_workspace(workspace: Path, outside: Path) -> Path:
    (workspace / "file_link").symlink_to(outside / "secret.txt")
    (workspace / "dir_link").symlink_to(outside)
    (workspace / "dangling").symlink_to(outside / "created-by-tool.txt")
    os.link(outside / "secret.txt", workspace / "hard.txt")
    return workspace


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_every_path_taking_tool_is_covered(registry: ToolRegistry) -> None:
    covered = [t.name for t in registry.list_all() if path_field(t)]
    assert {"read_file", "write_file", "delete_file", "list_files"} <= set(covered)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_no_tool_escapes(registry: ToolRegistry, hostile_workspace: Path, outside: Path, case: str) -> None:
    before = snapshot(outside)
    tried = []
    for tool in registry.list_all():
        field = path_field(tool)
        if field is None:
            continue
        tried.append(tool.name)
        value = HOSTILE[case].format(outside=outside)
        result = tool.execute(**build_args(tool, field, value))
        assert not result.success, f"{tool.name} accepted {case!r}: {result.output[:200]}"
        assert "TOP-SECRET" not in result.output + (result.error or ""), tool.name
        assert snapshot(outside) == before, f"{tool.name} changed the outside through {case!r}"
    assert {"read_file", "write_file", "delete_file", "list_files"} <= set(tried)
