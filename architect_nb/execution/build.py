"""`build_engine`: an `ExecutionEngine` built whole from a config, as every entry point makes one.

It fills the registry (`register_all_tools`, and the kernel tools when there is a kernel), reads the
workspace's Claude Code settings (unless `hooks.claude_settings` is off: their deny and ask rules apply, and
with `all` their hooks run), and hands the engine its hooks, guardrails, checkpoints and confirmer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from architect_nb.config.schema import AppConfig, ConfirmMode, GuardrailsConfig, SandboxConfig
from architect_nb.config.teaching_policy import policy_for
from architect_nb.execution.checkpoints.files import default_checkpoint_dir
from architect_nb.execution.checkpoints.store import CheckpointStore
from architect_nb.execution.confirmation.confirmers import Confirmer
from architect_nb.execution.confirmation.policy import ConfirmationPolicy
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.guardrails.claude_permissions import ClaudePermissions
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.execution.guardrails.secret_files import secret_values
from architect_nb.execution.hooks.claude_settings import read_claude_settings
from architect_nb.execution.hooks.executor import HookExecutor
from architect_nb.execution.hooks.transcript import HookTranscript
from architect_nb.provenance.record import Authorship
from architect_nb.redaction import default_redactor
from architect_nb.tools.base import BaseTool
from architect_nb.tools.kernel.session import KernelSession
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_all_tools, register_kernel_tools

__all__ = ["build_engine"]


def build_engine(
    config: AppConfig,
    *,
    mode: ConfirmMode | None = None,
    dry_run: bool = False,
    confirmer: Confirmer | None = None,
    kernel: KernelSession | None = None,
    tools: Sequence[BaseTool] = (),
) -> ExecutionEngine:
    """Build the registry, hooks, guardrails and checkpoints from `config`, and the engine with them.

    Args:
        config: The application config.
        mode: 'yolo', 'confirm-sensitive' (default) or 'confirm-all'.
        dry_run: Describe calls instead of running them.
        confirmer: Who approves calls; default the terminal.
        kernel: The live kernel (a notebook's, or `PlainKernel(namespace)`): adds the kernel tools unless
            `kernel.tools` is off, and runs kernel checks.
        tools: More tools for the registry (the ACP agent's, run in a notebook's kernel it connected).
    """
    root = config.workspace.root.resolve()
    use = config.hooks.claude_settings
    claude = read_claude_settings(root) if use != "off" else None
    rules = ClaudePermissions(claude, root) if claude is not None else None
    rails = rules.guardrails(config.guardrails) if rules is not None else config.guardrails
    registry = ToolRegistry()
    teaching = policy_for(config)
    # Who wrote which lines of the cells the tools write: on unless turned off; kept if a policy requires it.
    authorship = Authorship(enabled=config.notebook.provenance or teaching.require_provenance)
    register_all_tools(
        registry,
        config.workspace,
        config.commands,
        sandbox_config=_with_state_hidden(config),
        guardrails_config=config.guardrails,
        documents=kernel.documents if kernel is not None else None,
        own_notebook=kernel.own_notebook if kernel is not None else None,
        # Searches never look at sensitive files, nor at the state folders' snapshots of the workspace.
        sensitive_files=rails.sensitive_files if rails.active else (),
        hidden_folders=_state_folders(config),
        authorship=authorship,
    )
    if kernel is not None and config.kernel.tools:
        register_kernel_tools(registry, config, kernel)
    for tool in tools:
        registry.register(tool)
    if config.guardrails.sensitive_files:  # their values are redacted wherever they turn up
        default_redactor().add(secret_values(root, config.guardrails.sensitive_files))
    checkpoints = CheckpointStore.for_config(config)
    hooks = HookExecutor(
        config.hooks,
        root,
        claude_hooks=claude.hooks if claude is not None and use == "all" else (),
        # Claude-style hooks read the run's transcript: kept with the run's checkpoints.
        transcript=HookTranscript(checkpoints.on_disk, root),
    )
    return ExecutionEngine(
        registry,
        config,
        policy=ConfirmationPolicy(mode or "confirm-sensitive"),
        dry_run=dry_run,
        hook_executor=hooks,
        guardrails=_guardrails(rails, root, config.workspace.read_roots),
        confirmer=confirmer,
        claude_rules=rules,
        claude_settings=claude,
        checkpoints=checkpoints,
        kernel=kernel,
        teaching=teaching,
        authorship=authorship,
    )


def _guardrails(rails: GuardrailsConfig, root: Path, read_roots: Sequence[Path]) -> GuardrailsEngine | None:
    """The guardrails, when any rule is set or there are read roots (commands must not write in them)."""
    if not (rails.active or read_roots):
        return None
    return GuardrailsEngine(rails if rails.active else GuardrailsConfig(), root, read_roots=read_roots)


def _state_folders(config: AppConfig) -> list[str]:
    """architect-nb's state folder and `checkpoints.dir` if set elsewhere: where snapshots of the workspace
    are kept (inside the workspace, they would turn up in searches)."""
    folders = [str(default_checkpoint_dir().parent)]
    if config.checkpoints.dir is not None:
        folders.append(str(config.checkpoints.dir.expanduser()))
    return folders


def _with_state_hidden(config: AppConfig) -> SandboxConfig:
    """The sandbox config, hiding a `checkpoints.dir` set outside the default state folder too: it holds
    snapshots of the workspace, sensitive files included, which sandboxed commands must not read."""
    if config.checkpoints.dir is None:
        return config.sandbox
    hidden = [*config.sandbox.hide, str(config.checkpoints.dir.expanduser())]
    return config.sandbox.model_copy(update={"hide": hidden})
