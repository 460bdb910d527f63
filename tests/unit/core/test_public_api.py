"""The public surface is pinned: integrators import these names from these paths.

Pinned here: the package's own exports (what the README's Python API uses), the design document's names at
its module paths, and each public package's `__all__`. A module's internals are not pinned: they may move.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import architect_nb

TOP_LEVEL = [
    "AgentLoop",
    "AppConfig",
    "BaseTool",
    "ConfigError",
    "ConfirmationPolicy",
    "Confirmer",
    "ExecutionEngine",
    "GuardrailsEngine",
    "HookExecutor",
    "MCPToolAdapter",
    "PathTraversalError",
    "PlainKernel",
    "RunResult",
    "ScriptedConfirmer",
    "TerminalConfirmer",
    "ToolArgs",
    "ToolRegistry",
    "ToolResult",
    "WorkspaceTool",
    "__version__",
    "build_engine",
    "create_loop",
    "load_config",
    "load_ipython_extension",
    "unload_ipython_extension",
    "validate_path",
]

# The design document's names, at the module paths it (and the README) give them.
DESIGN = {
    "architect_nb.tools.base": ["BaseTool", "ToolResult"],
    "architect_nb.tools.registry": ["ToolRegistry", "DuplicateToolError", "ToolNotFoundError"],
    "architect_nb.tools.setup": ["register_all_tools"],
    "architect_nb.tools.filesystem": ["ReadFileTool", "WriteFileTool", "DeleteFileTool", "ListFilesTool"],
    "architect_nb.tools.patch": ["ApplyPatchTool"],
    "architect_nb.tools.search": ["SearchCodeTool", "GrepTool", "FindFilesTool"],
    "architect_nb.tools.commands": ["RunCommandTool"],
    "architect_nb.execution.engine": ["ExecutionEngine"],
    "architect_nb.execution.validators": ["validate_path", "PathTraversalError"],
    "architect_nb.execution": [
        "ExecutionEngine",
        "ConfirmationPolicy",
        "HookExecutor",
        "GuardrailsEngine",
        "validate_path",
        "build_engine",
    ],
    "architect_nb.execution.confirmation": ["ConfirmationPolicy", "ScriptedConfirmer"],
    "architect_nb.execution.hooks": ["HookExecutor", "HookEvent", "HookDecision", "HookResult"],
    "architect_nb.execution.guardrails": ["GuardrailsEngine"],
    "architect_nb.mcp.adapter": ["MCPToolAdapter"],
}

PUBLIC = {
    "architect_nb": TOP_LEVEL,
    "architect_nb.notebook": ["load_ipython_extension", "unload_ipython_extension"],
    "architect_nb.paths": ["PathGlobs", "PathTraversalError", "is_inside", "validate_path", "visible"],
    "architect_nb.execution.validators": [
        "MAX_PATH_LENGTH",
        "PathTraversalError",
        "is_inside",
        "validate_path",
        "visible",
    ],
    "architect_nb.execution": [
        "CheckpointStore",
        "ConfirmationPolicy",
        "Confirmer",
        "ExecutionEngine",
        "GuardrailsEngine",
        "HookExecutor",
        "PathTraversalError",
        "ScriptedConfirmer",
        "TerminalConfirmer",
        "build_engine",
        "validate_path",
    ],
    "architect_nb.execution.engine": ["ExecutionEngine", "RunContext"],
    "architect_nb.execution.build": ["build_engine"],
    "architect_nb.execution.confirmation": [
        "Approval",
        "CommandCheck",
        "ConfirmationAnswer",
        "ConfirmationPolicy",
        "ConfirmationRequest",
        "Confirmer",
        "NoTTYError",
        "ScriptedConfirmer",
        "TerminalConfirmer",
    ],
    "architect_nb.execution.checkpoints": [
        "AlreadyUndoneError",
        "CheckpointError",
        "CheckpointFiles",
        "CheckpointStore",
        "FileChange",
        "SnapshotError",
        "StepRecord",
        "UndoReport",
        "checkpoint_files",
    ],
    "architect_nb.execution.hooks": ["HookDecision", "HookEvent", "HookExecutor", "HookResult"],
    "architect_nb.execution.guardrails": ["ClaudePermissions", "CodeRuleHit", "GuardrailsEngine"],
    "architect_nb.execution.gates": ["run_kernel_check"],
    "architect_nb.tools.base": [
        "BaseTool",
        "CallOutcome",
        "ToolRefusedError",
        "ToolResult",
        "format_validation_error",
    ],
    "architect_nb.tools.outcome": ["CallOutcome"],
    "architect_nb.tools.metadata": ["ToolMetadata"],
    "architect_nb.tools.registry": [
        "DuplicateToolError",
        "ToolNotFoundError",
        "ToolRegistry",
        "ToolRegistryError",
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
        "CellExecution",
        "InspectVariableArgs",
        "InspectVariableTool",
        "KernelSession",
        "ListVariablesArgs",
        "ListVariablesTool",
        "OwnNotebook",
        "PlainKernel",
        "ProposeCellArgs",
        "ProposeCellTool",
        "RunCellArgs",
        "RunCellTool",
        "RunPythonArgs",
        "RunPythonTool",
    ],
    "architect_nb.mcp.adapter": ["MCPToolAdapter", "ToolCaller", "mcp_tool_name"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_all_is_pinned(module: str) -> None:
    assert sorted(importlib.import_module(module).__all__) == sorted(PUBLIC[module])


@pytest.mark.parametrize("module", sorted(DESIGN))
def test_the_design_documents_names_are_where_it_says(module: str) -> None:
    loaded = importlib.import_module(module)
    for name in DESIGN[module]:
        assert getattr(loaded, name) is not None, f"{module}.{name}"


def test_the_package_exports_are_the_objects_of_their_modules() -> None:
    from architect_nb.execution.build import build_engine
    from architect_nb.execution.engine import ExecutionEngine
    from architect_nb.tools.base import ToolResult

    assert architect_nb.build_engine is build_engine
    assert architect_nb.ExecutionEngine is ExecutionEngine
    assert architect_nb.ToolResult is ToolResult
    for name in TOP_LEVEL:
        assert getattr(architect_nb, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        architect_nb.no_such_name  # noqa: B018


def test_a_lazy_export_loads_only_its_own_module() -> None:
    code = (
        "import sys, json; import architect_nb; architect_nb.validate_path; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('architect_nb'))))"
    )
    loaded = json.loads(subprocess.check_output([sys.executable, "-c", code], text=True))
    assert loaded == [
        "architect_nb",
        "architect_nb._lazy",
        "architect_nb.paths",
        "architect_nb.paths.validators",
    ]


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
