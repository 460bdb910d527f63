"""The public surface is pinned: integrators import these names from these paths."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

PUBLIC = {
    "architect_nb": ["__version__", "load_ipython_extension", "unload_ipython_extension"],
    "architect_nb.notebook": ["load_ipython_extension", "unload_ipython_extension"],
    "architect_nb.tools.base": ["BaseTool", "ToolResult", "format_validation_error"],
    "architect_nb.tools.registry": [
        "DuplicateToolError",
        "ToolNotFoundError",
        "ToolRegistry",
        "ToolRegistryError",
    ],
    "architect_nb.paths.validators": [
        "MAX_PATH_LENGTH",
        "PathTraversalError",
        "is_inside",
        "validate_path",
        "visible",
    ],
    "architect_nb.tools.setup": [
        "register_all_tools",
        "register_command_tools",
        "register_filesystem_tools",
        "register_kernel_tools",
        "register_search_tools",
    ],
    "architect_nb.tools.workspace": ["PATH_HELP", "ToolArgs", "WorkspaceTool"],
    # The tool families, at the design document's module paths (each a package since the tools folder was
    # split by family): the tool classes and their argument models.
    "architect_nb.tools.filesystem": [
        "DeleteFileArgs",
        "DeleteFileTool",
        "EditFileArgs",
        "EditFileTool",
        "ListFilesArgs",
        "ListFilesTool",
        "ReadFileArgs",
        "ReadFileTool",
        "WriteFileArgs",
        "WriteFileTool",
    ],
    "architect_nb.tools.patch": ["ApplyPatchArgs", "ApplyPatchTool", "apply_patch_text"],
    "architect_nb.tools.search": [
        "DEFAULT_TIME_BOUND",
        "FindFilesArgs",
        "FindFilesTool",
        "GrepArgs",
        "GrepTool",
        "SearchCodeArgs",
        "SearchCodeTool",
    ],
    "architect_nb.tools.commands": [
        "CommandVerdict",
        "RunCommandArgs",
        "RunCommandTool",
        "Sensitivity",
        "classify_command",
    ],
    "architect_nb.tools.notebook_files": [
        "DeleteNotebookCellArgs",
        "DeleteNotebookCellTool",
        "EditNotebookCellArgs",
        "EditNotebookCellTool",
        "InsertNotebookCellArgs",
        "InsertNotebookCellTool",
        "ReadNotebookArgs",
        "ReadNotebookTool",
    ],
    "architect_nb.tools.kernel": [
        "InspectVariableArgs",
        "InspectVariableTool",
        "KernelSession",
        "ListVariablesArgs",
        "ListVariablesTool",
        "PlainKernel",
        "ProposeCellArgs",
        "ProposeCellTool",
        "RunPythonArgs",
        "RunPythonTool",
    ],
    "architect_nb.execution.engine": ["ExecutionEngine", "build_engine"],
    "architect_nb.execution.confirmation.policy": [
        "CommandCheck",
        "ConfirmMode",
        "ConfirmationPolicy",
        "MODES",
        "NoTTYError",
        "classify_command_call",
    ],
    "architect_nb.execution.guardrails.rails": [
        "CodeRuleHit",
        "GuardrailsEngine",
    ],
    "architect_nb.execution.hooks.executor": [
        "HookDecision",
        "HookEvent",
        "HookExecutor",
        "HookResult",
        "LEGACY_POST_EDIT_MATCHER",
    ],
    "architect_nb.mcp.adapter": ["MCPToolAdapter", "ToolCaller", "mcp_tool_name"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_all_is_pinned(module: str) -> None:
    assert sorted(importlib.import_module(module).__all__) == sorted(PUBLIC[module])


def test_filesystem_and_config_names_exist() -> None:
    fs = importlib.import_module("architect_nb.tools.filesystem")
    for name in ("ReadFileTool", "WriteFileTool", "DeleteFileTool", "ListFilesTool"):
        assert name in fs.__all__
    config = importlib.import_module("architect_nb.config")
    for name in ("AppConfig", "WorkspaceConfig", "CommandsConfig", "load_config", "ConfigError"):
        assert name in config.__all__
    sections = set(config.AppConfig.model_fields)
    assert {"workspace", "commands", "hooks", "guardrails", "llm", "agents", "mcp", "logging"} <= sections


def test_import_is_cheap_and_loads_no_heavy_library() -> None:
    code = (
        "import sys, json, time; t = time.perf_counter(); import architect_nb; "
        "print(json.dumps({'s': time.perf_counter() - t, 'mods': sorted(sys.modules)}))"
    )
    out = json.loads(subprocess.check_output([sys.executable, "-c", code], text=True))
    heavy = {"litellm", "mcp", "ipywidgets", "jupyterlab", "IPython", "pydantic", "structlog", "tree_sitter"}
    assert not heavy & {m.split(".")[0] for m in out["mods"]}
