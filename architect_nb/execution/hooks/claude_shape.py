"""Claude Code's names for our tools and their arguments, both ways: the table Claude-style hooks go through.

A hook from `.claude/settings.json` was written for Claude Code's tools, so it sees each call as Claude Code
would describe it: `tool_name` in Claude Code's names (`run_command` is `Bash`), `tool_input` with Claude
Code's field names and absolute paths (`path` is `file_path`), and after the call a `tool_response` object.
An `updatedInput` it returns comes back through the same table into our names; only the fields it changed are
taken. Fields a row does not name keep their own names both ways; so do tools without a row (MCP tools become
`mcp__<server>__<tool>`).

`TOOLS` is the table docs/hooks.md reproduces: `markdown_table()` writes it, and a test checks the copy.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "TOOLS",
    "ClaudeCall",
    "FieldMap",
    "ToolShape",
    "claude_call",
    "claude_response",
    "markdown_table",
    "our_changes",
]

# How a value is converted: as is, a workspace path (absolute for Claude Code), seconds (milliseconds for
# Claude Code), or a boolean that means the opposite (`case_sensitive` is `-i`).
Kind = Literal["same", "path", "seconds", "negated"]


@dataclass(frozen=True, slots=True)
class FieldMap:
    ours: str
    claude: str
    kind: Kind = "same"


@dataclass(frozen=True, slots=True)
class ToolShape:
    """One row of the table.

    Attributes:
        ours: Our tool's name.
        claude: Claude Code's tool name.
        fields: Our fields that Claude Code names differently or converts.
        fixed: Fields Claude Code's tool has and ours lacks, with the value sent (a hook cannot change them).
        note: What the table says besides the fields.
        also: How the table names the Claude Code tool when it is not always `claude`.
    """

    ours: str
    claude: str
    fields: tuple[FieldMap, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    note: str = ""
    also: str = ""


_FILE = FieldMap("path", "file_path", "path")
_FOLDER = FieldMap("path", "path", "path")
_NOTEBOOK = FieldMap("path", "notebook_path", "path")
_PATTERN = FieldMap("pattern", "pattern")

TOOLS: tuple[ToolShape, ...] = (
    ToolShape(
        "run_command",
        "Bash",
        (FieldMap("command", "command"), FieldMap("timeout", "timeout", "seconds")),
        note="`cwd` and `env` keep their names",
    ),
    ToolShape("read_file", "Read", (_FILE, FieldMap("offset", "offset"), FieldMap("limit", "limit"))),
    ToolShape("read_notebook", "Read", (_FILE,)),
    ToolShape("write_file", "Write", (_FILE, FieldMap("content", "content"))),
    ToolShape(
        "edit_file",
        "Edit",
        (_FILE, FieldMap("old_str", "old_string"), FieldMap("new_str", "new_string")),
        fixed=(("replace_all", False),),
    ),
    ToolShape(
        "apply_patch",
        "Edit",
        (_FILE,),
        note="`old_string` and `new_string` (`Edit`) or `edits` (`MultiEdit`) are read from the hunks of "
        "`patch`, which keeps its name; they cannot be rewritten",
        also="`Edit` (one hunk) or `MultiEdit`",
    ),
    ToolShape(
        "grep",
        "Grep",
        (
            _PATTERN,
            _FOLDER,
            FieldMap("file_pattern", "glob"),
            FieldMap("case_sensitive", "-i", "negated"),
            FieldMap("max_results", "head_limit"),
        ),
        note="`pattern` is literal text here",
    ),
    ToolShape(
        "search_code",
        "Grep",
        (
            _PATTERN,
            _FOLDER,
            FieldMap("file_pattern", "glob"),
            FieldMap("context_lines", "-C"),
            FieldMap("max_results", "head_limit"),
        ),
    ),
    ToolShape("find_files", "Glob", (_PATTERN, _FOLDER)),
    ToolShape("list_files", "LS", (_FOLDER,)),
    ToolShape(
        "edit_notebook_cell",
        "NotebookEdit",
        (
            _NOTEBOOK,
            FieldMap("cell_id", "cell_id"),
            FieldMap("old_str", "old_string"),
            FieldMap("new_str", "new_source"),
        ),
        fixed=(("edit_mode", "replace"),),
        note="`new_source` is the replacement text, not the whole cell",
    ),
    ToolShape(
        "insert_notebook_cell",
        "NotebookEdit",
        (
            _NOTEBOOK,
            FieldMap("after_cell_id", "cell_id"),
            FieldMap("source", "new_source"),
            FieldMap("cell_type", "cell_type"),
        ),
        fixed=(("edit_mode", "insert"),),
    ),
    ToolShape(
        "delete_notebook_cell",
        "NotebookEdit",
        (_NOTEBOOK, FieldMap("cell_id", "cell_id")),
        fixed=(("edit_mode", "delete"),),
    ),
    ToolShape(
        "delete_file",
        "delete_file",
        (_FILE,),
        note="Claude Code has no such tool; its path is `file_path` all the same",
    ),
)

_BY_NAME = {shape.ours: shape for shape in TOOLS}
_PATCH_FIELDS = ("old_string", "new_string", "edits", "replace_all")


@dataclass(frozen=True, slots=True)
class ClaudeCall:
    """A call as a Claude-style hook sees it; `shape` is its row (None for MCP and unlisted tools)."""

    tool_name: str
    tool_input: dict[str, Any]
    shape: ToolShape | None = None


def claude_call(tool: object, arguments: Mapping[str, Any], root: Path) -> ClaudeCall:
    """`tool` (a tool object, or just its name) called with `arguments`, in Claude Code's names.

    An MCP tool (one with `server_name` and `original_name`, as `MCPToolAdapter`s have) is
    `mcp__<server>__<tool>` with its arguments unchanged.
    """
    server, original = getattr(tool, "server_name", None), getattr(tool, "original_name", None)
    if isinstance(server, str) and isinstance(original, str):
        return ClaudeCall(f"mcp__{server}__{original}", dict(arguments))
    name = tool if isinstance(tool, str) else str(getattr(tool, "name", tool))
    shape = _BY_NAME.get(name)
    if shape is None:
        return ClaudeCall(name, dict(arguments))
    renamed = {field.ours: field for field in shape.fields}
    tool_input: dict[str, Any] = {}
    for key, value in arguments.items():
        field = renamed.get(key)
        if value is None:
            continue  # an optional argument left out: Claude Code's input has no nulls either
        if field is None:
            tool_input[key] = value
        else:
            tool_input[field.claude] = _to_claude(field.kind, value, root)
    tool_input.update(shape.fixed)
    tool_name = shape.claude
    if shape.ours == "apply_patch":
        tool_name = _patch_as_edits(str(arguments.get("patch", "")), tool_input)
    return ClaudeCall(tool_name, tool_input, shape)


def our_changes(call: ClaudeCall, updated: Mapping[str, Any], root: Path) -> tuple[dict[str, Any], list[str]]:
    """What a hook's `updatedInput` changes, in our names, and the fields it changed that cannot be taken.

    A field equal to what the hook was sent is no change (hooks often echo the whole input back).
    """
    shape = call.shape
    renamed = {field.claude: field for field in shape.fields} if shape else {}
    fixed = {key for key, _ in shape.fixed} if shape else set()
    if shape is not None and shape.ours == "apply_patch":
        fixed.update(_PATCH_FIELDS)
    changes: dict[str, Any] = {}
    refused: list[str] = []
    for key, value in updated.items():
        if key in call.tool_input and call.tool_input[key] == value:
            continue
        field = renamed.get(key)
        if field is not None:
            changes[field.ours] = _to_ours(field.kind, value, root)
        elif key in fixed:
            refused.append(key)
        else:
            changes[key] = value
    return changes, refused


def claude_response(call: ClaudeCall, output: str) -> dict[str, Any]:
    """`tool_response` for a PostToolUse hook: `success`, `output` and, for file tools, `filePath`."""
    response: dict[str, Any] = {"success": True, "output": output}
    path = call.tool_input.get("file_path", call.tool_input.get("notebook_path"))
    if isinstance(path, str):
        response["filePath"] = path
    return response


def markdown_table() -> str:
    """The table as docs/hooks.md shows it."""
    lines = [
        "| Our tool | Claude Code's `tool_name` | `tool_input` (ours → Claude Code's) |",
        "|---|---|---|",
    ]
    for shape in TOOLS:
        parts = [_describe(field) for field in shape.fields]
        parts += [f"adds `{key}: {_json_scalar(value)}`" for key, value in shape.fixed]
        if shape.note:
            parts.append(shape.note)
        lines.append(f"| `{shape.ours}` | {shape.also or f'`{shape.claude}`'} | {'; '.join(parts)} |")
    lines.append("| `mcp_<server>_<tool>` | `mcp__<server>__<tool>` (the server's own names) | unchanged |")
    lines.append("| any other tool | its own name | unchanged |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- helpers


def _to_claude(kind: Kind, value: Any, root: Path) -> Any:
    if kind == "path" and isinstance(value, str):
        return os.path.normpath(os.path.join(root, value))
    if kind == "seconds" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value * 1000)
    if kind == "negated" and isinstance(value, bool):
        return not value
    return value


def _to_ours(kind: Kind, value: Any, root: Path) -> Any:
    if kind == "path" and isinstance(value, str) and os.path.isabs(value):
        relative = os.path.relpath(os.path.normpath(value), root)
        # A path outside the workspace stays absolute: the sandbox refuses it with a clear message.
        return value if relative == ".." or relative.startswith("../") else Path(relative).as_posix()
    if kind == "seconds" and isinstance(value, int | float) and not isinstance(value, bool):
        return max(1, math.ceil(value / 1000))
    if kind == "negated" and isinstance(value, bool):
        return not value
    return value


def _patch_as_edits(patch: str, tool_input: dict[str, Any]) -> str:
    """Add Edit's or MultiEdit's fields, read from a unified diff's hunks; return the tool name to use."""
    from architect_nb.tools.patch.parse import PatchParseError, parse_patch

    try:
        files = parse_patch(patch)
    except PatchParseError:
        return "Edit"  # the tool will say what is wrong with the patch; the hook sees file_path and patch
    hunks = [hunk for file in files[:1] for hunk in file.hunks]
    edits = [
        {
            "old_string": "".join(line.text + "\n" for line in hunk.lines if line.kind != "+"),
            "new_string": "".join(line.text + "\n" for line in hunk.lines if line.kind != "-"),
            "replace_all": False,
        }
        for hunk in hunks
    ]
    if len(edits) == 1:
        tool_input.update(edits[0])
        return "Edit"
    if edits:
        tool_input["edits"] = edits
        return "MultiEdit"
    return "Edit"


def _describe(field: FieldMap) -> str:
    name = f"`{field.ours}`" if field.ours == field.claude else f"`{field.ours}` → `{field.claude}`"
    extra = {
        "same": "",
        "path": " (absolute)",
        "seconds": " (seconds → milliseconds)",
        "negated": " (the opposite)",
    }[field.kind]
    return name + extra


def _json_scalar(value: Any) -> str:
    return "false" if value is False else "true" if value is True else f'"{value}"'
