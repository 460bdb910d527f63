"""`ToolMetadata`: the structured extras of a `ToolResult`, every key named and typed in one place.

The model never sees metadata; the engine, the agent loop and the notebook read it. Every key is optional: a
tool sets those that describe what it did. Keys are grouped by who sets them.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["ToolMetadata"]


class ToolMetadata(TypedDict, total=False):
    # How the call ended is `ToolResult.outcome`; what refused it, when that has a name:
    hook: str  # the pre_tool_use hook that blocked it

    # What the call changed. (What the engine adds to any tool's result, the files changed, the hooks' results
    # and its notes, are `ToolResult`'s own typed fields, not metadata.)
    path: str  # the file the call was about, relative to the workspace
    diff: str  # the unified diff the call made
    created: bool  # the call created the file
    line: int  # edit_file: where the edit starts
    loose: bool  # edit_file: old_str matched only after whitespace was normalised
    engine: str  # apply_patch: which patch engine applied it
    placement_notes: list[str]  # apply_patch: where hunks landed away from their stated lines
    document_change: dict[str, Any]  # a notebook open in a front end: its cells as changed (for undo)
    open_in: str  # the front end a notebook tool found the notebook open in

    # What a reading tool read.
    lines: int
    first_line: int
    last_line: int
    total_lines: int
    entries: list[str]  # list_files: the entries shown
    total: int  # list_files: every entry, shown or not
    cells: int  # read_notebook: cells in the notebook
    cells_shown: int
    nbformat: str

    # What a search found.
    backend: str  # ripgrep or python
    matches: int
    files_with_matches: int
    shown: int
    truncated: bool
    timed_out: bool  # a search or a command that hit its time bound
    files_searched: int
    files_read: int
    files: int  # find_files: files that matched

    # A shell command (run_command).
    sensitivity: str  # safe, dev or dangerous
    blocked: bool  # the blocklist refused it
    sandboxed: bool  # it ran in the OS sandbox
    exit_code: int | None
    lines_omitted: int
    cwd: str

    # Code run in the kernel, and the other kernel tools.
    images: list[dict[str, str]]  # {mime, data (base64), alt}
    interrupted: bool  # the person pressed the kernel's stop button
    count: int  # list_variables: variables listed
    code: str  # propose_cell: the cell proposed

    # A remote MCP tool.
    server: str
    tool: str
    structured_content: Any
