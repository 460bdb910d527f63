"""Post-hook results reach the notebook and the transcript as structured data, not only as text."""

from __future__ import annotations

from pathlib import Path

from architect_nb.config import load_config
from architect_nb.execution.build import build_engine


def test_post_hook_results_are_in_the_metadata(workspace: Path) -> None:
    hooks = {
        "post_tool_use": [
            {"name": "lint", "command": "echo 'E1 bad style' >&2; exit 1", "matcher": "write_file"},
            {"name": "types", "command": "true", "matcher": "write_file"},
        ]
    }
    config = load_config(overrides={"workspace.root": str(workspace), "hooks": hooks}, environ={})
    result = build_engine(config, mode="yolo").execute_tool_call(
        "write_file", {"path": "a.py", "content": "x\n"}
    )
    assert result.success
    by_name = {h["name"]: h for h in result.hook_results}
    assert by_name["lint"]["passed"] is False and by_name["lint"]["exit_code"] == 1
    assert "E1 bad style" in by_name["lint"]["output"] and by_name["lint"]["event"] == "post_tool_use"
    assert by_name["types"]["passed"] is True
    assert "[Hook lint: FAILED (exit 1)]" in result.output
