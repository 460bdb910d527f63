"""Registering the built-in tools. `register_all_tools` is how every entry point fills a registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from architect_nb.config.schema import (
    AppConfig,
    CommandsConfig,
    GuardrailsConfig,
    SandboxConfig,
    WorkspaceConfig,
)
from architect_nb.provenance.record import Authorship
from architect_nb.tools.commands.run_command import RunCommandTool
from architect_nb.tools.filesystem.file_tools import (
    DeleteFileTool,
    EditFileTool,
    ListFilesTool,
    ReadFileTool,
    WriteFileTool,
)
from architect_nb.tools.notebook_files.backend import NotebookDocuments
from architect_nb.tools.notebook_files.notebook_tools import (
    DeleteNotebookCellTool,
    EditNotebookCellTool,
    InsertNotebookCellTool,
    ReadNotebookTool,
)
from architect_nb.tools.patch.apply_patch import ApplyPatchTool
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.todo import TodoTool
from architect_nb.tools.workspace import WorkspaceTool

if TYPE_CHECKING:
    from architect_nb.tools.kernel.session import KernelSession, OwnNotebook
    from architect_nb.tools.notebook_files.backend import DocumentBackend

__all__ = [
    "register_all_tools",
    "register_command_tools",
    "register_filesystem_tools",
    "register_kernel_tools",
    "register_search_tools",
]


def register_filesystem_tools(
    registry: ToolRegistry,
    workspace_config: WorkspaceConfig,
    documents: DocumentBackend | None = None,
    own_notebook: Callable[[], OwnNotebook | str] | None = None,
    authorship: Authorship | None = None,
) -> None:
    """The file tools and the notebook tools; `documents` finds notebooks open in a front end (the notebook
    tools then change those there), else every notebook is a file. `own_notebook` (the kernel session's)
    is the run's notebook: when its file is not in the workspace, they reach it through its front end."""
    root = workspace_config.root.resolve()
    notebooks = NotebookDocuments(documents, own_notebook, authorship or Authorship())
    tools: list[WorkspaceTool] = [
        ReadFileTool(root),
        WriteFileTool(root),
        DeleteFileTool(root, workspace_config.allow_delete),
        ListFilesTool(root),
        EditFileTool(root),
        ApplyPatchTool(root),
        ReadNotebookTool(root, documents=notebooks),
        EditNotebookCellTool(root, notebooks),
        InsertNotebookCellTool(root, notebooks),
        DeleteNotebookCellTool(root, workspace_config.allow_delete, notebooks),
    ]
    for tool in tools:
        _register_with_read_roots(registry, tool, workspace_config)


def _register_with_read_roots(
    registry: ToolRegistry, tool: WorkspaceTool, workspace_config: WorkspaceConfig
) -> None:
    """Register `tool`, giving it `workspace.read_roots`: readable by tools that read, refused by the rest."""
    tool.read_roots = tuple(workspace_config.read_roots)
    registry.register(tool)


def register_search_tools(
    registry: ToolRegistry,
    workspace_config: WorkspaceConfig,
    *,
    sensitive_files: Sequence[str] = (),
    hidden_folders: Sequence[str] = (),
) -> None:
    """search_code, grep and find_files, which never look at `sensitive_files` (globs) nor in
    `hidden_folders` (absolute paths: architect-nb's state folders)."""
    from architect_nb.tools.search.search_tools import FindFilesTool, GrepTool, SearchCodeTool

    root = workspace_config.root.resolve()
    for tool in (SearchCodeTool, GrepTool, FindFilesTool):
        _register_with_read_roots(
            registry,
            tool(root, sensitive_files=sensitive_files, hidden_folders=hidden_folders),
            workspace_config,
        )


def register_command_tools(
    registry: ToolRegistry,
    workspace_config: WorkspaceConfig,
    commands_config: CommandsConfig,
    *,
    sandbox_config: SandboxConfig | None = None,
    guardrails_config: GuardrailsConfig | None = None,
) -> None:
    """run_command, only when `commands_config.enabled`, in the OS sandbox `sandbox_config` describes (which
    also hides the guardrails' sensitive files and makes their protected files read-only)."""
    if not commands_config.enabled:
        return
    registry.register(
        RunCommandTool(
            workspace_config.root.resolve(),
            commands_config,
            sandbox_config=sandbox_config,
            guardrails_config=guardrails_config,
            read_roots=tuple(workspace_config.read_roots),
        )
    )


def register_all_tools(
    registry: ToolRegistry,
    workspace_config: WorkspaceConfig,
    commands_config: CommandsConfig | None = None,
    *,
    sandbox_config: SandboxConfig | None = None,
    guardrails_config: GuardrailsConfig | None = None,
    documents: DocumentBackend | None = None,
    own_notebook: Callable[[], OwnNotebook | str] | None = None,
    sensitive_files: Sequence[str] = (),
    hidden_folders: Sequence[str] = (),
    authorship: Authorship | None = None,
) -> None:
    """Every built-in tool but the kernel's; `sensitive_files` and `hidden_folders` are kept from searches
    (`register_search_tools`); the notebook tools record in the cells they write who wrote which lines, as
    `authorship` says (`provenance.record`)."""
    register_filesystem_tools(registry, workspace_config, documents, own_notebook, authorship)
    register_search_tools(
        registry, workspace_config, sensitive_files=sensitive_files, hidden_folders=hidden_folders
    )
    registry.register(TodoTool())
    register_command_tools(
        registry,
        workspace_config,
        commands_config or CommandsConfig(),
        sandbox_config=sandbox_config,
        guardrails_config=guardrails_config,
    )


def register_kernel_tools(registry: ToolRegistry, config: AppConfig, kernel: KernelSession) -> None:
    """list_variables, inspect_variable, run_python, propose_cell and run_cell, on `kernel`."""
    from architect_nb.tools.kernel.kernel_tools import (
        InspectVariableTool,
        ListVariablesTool,
        ProposeCellTool,
        RunPythonTool,
    )
    from architect_nb.tools.kernel.run_cell import RunCellTool

    root = config.workspace.root.resolve()
    mb = config.kernel.undo_budget_mb
    budget = mb * 1024 * 1024 if mb is not None else None
    registry.register(ListVariablesTool(kernel, root))
    registry.register(InspectVariableTool(kernel, root))
    registry.register(
        RunPythonTool(
            kernel,
            root,
            timeout=float(config.kernel.timeout),
            write_namespace=config.kernel.write_namespace,
            undo_budget=budget,
        )
    )
    registry.register(ProposeCellTool(kernel, root))
    registry.register(RunCellTool(kernel, undo_budget=budget))
