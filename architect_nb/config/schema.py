"""The `.architect.yaml` schema: one Pydantic model per section, unknown keys refused.

Key names follow the reference implementation so its users' files work unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

__all__ = [
    "AgentSpec",
    "AppConfig",
    "CheckpointsConfig",
    "CodeRuleConfig",
    "CommandsConfig",
    "CostsConfig",
    "GuardrailsConfig",
    "HookConfig",
    "HooksConfig",
    "InstructionsConfig",
    "KernelConfig",
    "LLMConfig",
    "LoggingConfig",
    "MCPConfig",
    "MCPServerConfig",
    "NotebookConfig",
    "QualityGateConfig",
    "SandboxConfig",
    "TeachingConfig",
    "TeachingMode",
    "WorkspaceConfig",
]

ConfirmMode = Literal["yolo", "confirm-sensitive", "confirm-all"]
#: LiteLLM's `reasoning_effort` levels ("none" turns thinking off where a model thinks by default).
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]
#: A course's rule for the agent, from the loosest: `config.teaching_policy.STRICTNESS` orders them.
TeachingMode = Literal["full", "explain", "hints", "off"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=True)


class WorkspaceConfig(_Section):
    root: Path = Field(
        Path("."), description="The folder the agent may touch; nothing outside it is reachable."
    )
    allow_delete: bool = Field(False, description="Let delete_file remove files.")
    read_roots: list[Path] = Field(
        default_factory=list,
        description="Folders outside the workspace (absolute or `~/...`, existing) that the file and "
        "search tools may read, list and search but never change, by absolute path or through a workspace "
        "symlink into one; commands see them read-only in the OS sandbox. Not `/`, the home folder or a "
        "folder holding it or the workspace, nor one inside the workspace.",
    )

    @field_validator("read_roots")
    @classmethod
    def _read_roots_exist(cls, value: list[Path]) -> list[Path]:
        roots = []
        for entry in value:
            path = entry.expanduser()
            if not path.is_absolute():
                raise ValueError(f"workspace.read_roots entry '{entry}' must be absolute or start with '~/'")
            if not path.is_dir():
                raise ValueError(f"workspace.read_roots entry '{entry}' is not an existing folder")
            real = path.resolve()
            if real == Path(real.anchor):
                raise ValueError(
                    f"workspace.read_roots entry '{entry}' is the file system's root; "
                    "name the data folder itself"
                )
            home = Path.home().resolve()
            if home.is_relative_to(real):
                # The home folder holds credentials (~/.ssh, ~/.aws, cloud and package tokens) and this
                # project's saved runs: no tool may read it whole.
                raise ValueError(
                    f"workspace.read_roots entry '{entry}' holds your home folder ({home}), where "
                    "credentials live; name the data folder itself"
                )
            roots.append(real)
        return list(dict.fromkeys(roots))

    @model_validator(mode="after")
    def _read_roots_apart(self) -> WorkspaceConfig:
        if not self.read_roots or not self.root.is_absolute():
            return self  # a relative root is checked again once the loader has anchored it
        root = self.root.resolve()
        for folder in self.read_roots:
            if root.is_relative_to(folder):
                raise ValueError(
                    f"workspace.read_roots entry '{folder}' holds the workspace ({root}), so everything "
                    "around the workspace would be readable; name the data folder itself"
                )
            if folder.is_relative_to(root):
                raise ValueError(
                    f"workspace.read_roots entry '{folder}' is inside the workspace ({root}), which is "
                    "readable already; leave it out"
                )
        return self


class CommandsConfig(_Section):
    enabled: bool = Field(True, description="Register run_command at all.")
    default_timeout: int = Field(30, ge=1, le=600, description="Seconds before a command is killed.")
    max_output_lines: int = Field(200, ge=10, le=5000, description="Lines kept (head and tail) of output.")
    allowed_only: bool = Field(False, description="Refuse 'dangerous' commands outright instead of asking.")
    blocked_patterns: list[str] = Field(default_factory=list, description="Extra regexes always blocked.")
    safe_commands: list[str] = Field(
        default_factory=list, description="Extra command prefixes treated as safe."
    )
    dev_prefixes: list[str] = Field(
        default_factory=list, description="Extra command prefixes treated as dev."
    )


class SandboxConfig(_Section):
    mode: Literal["auto", "required", "off"] = Field(
        "auto",
        description="`auto`: run every command in the OS sandbox (bubblewrap) when it works here, "
        "otherwise run as without it and say so; `required`: refuse commands when it cannot start; "
        "`off`: never use it.",
    )
    network: bool = Field(
        False, description="Let sandboxed commands use the network (off: loopback inside the sandbox only)."
    )
    hide: list[str] = Field(
        default_factory=list,
        description="More files or folders to hide from commands (`~/...` or absolute paths), on top of "
        "the credential folders hidden by default.",
    )
    dev_without_asking: bool = Field(
        True,
        description="In confirm-sensitive, `dev` commands (tests, linters, builds) run without asking when "
        "they run sandboxed without network; `dangerous` ones still ask.",
    )
    program: str = Field("bwrap", description="The bubblewrap program: a name on PATH or a path.")

    @field_validator("hide")
    @classmethod
    def _hide_paths(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.startswith(("/", "~/")) and path != "~":
                raise ValueError(
                    f"sandbox.hide entry {path!r} must start with '~/' or '/'; hide files inside the "
                    "workspace with guardrails.sensitive_files"
                )
        return value


class HookConfig(_Section):
    name: str = Field("", description="Shown in results and logs (default: the command).")
    command: str = Field(description="Run by `sh -c` in the workspace; `{file}` becomes the file's path.")
    matcher: str = Field("*", description="Regex on the tool name ('*' matches all).")
    file_patterns: list[str] = Field(
        default_factory=list, description="Globs on the call's files; empty matches every call."
    )
    timeout: int = Field(
        10, ge=1, le=600, description="Seconds before the hook is killed (a warning, never a block)."
    )
    async_: bool = Field(
        False, alias="async", description="Run in the background; it can neither block nor rewrite."
    )
    enabled: bool = Field(True, description="Set false to keep a hook in the file but not run it.")


class HooksConfig(_Section):
    pre_tool_use: list[HookConfig] = Field(
        default_factory=list,
        description="Before a tool call; exit 2 (or JSON) blocks it, JSON may rewrite its arguments.",
    )
    post_tool_use: list[HookConfig] = Field(
        default_factory=list,
        description="After a successful tool call; failures are shown to the model, never block.",
    )
    pre_llm_call: list[HookConfig] = Field(
        default_factory=list, description="Before each model call; may block it."
    )
    post_llm_call: list[HookConfig] = Field(default_factory=list, description="After each model call.")
    session_start: list[HookConfig] = Field(default_factory=list, description="When a run starts.")
    session_end: list[HookConfig] = Field(default_factory=list, description="When a run ends.")
    on_error: list[HookConfig] = Field(default_factory=list, description="When a run stops on an error.")
    budget_warning: list[HookConfig] = Field(
        default_factory=list, description="When spending crosses costs.warn_at_usd."
    )
    context_compress: list[HookConfig] = Field(
        default_factory=list, description="When old steps are summarised to fit the context window."
    )
    agent_complete: list[HookConfig] = Field(
        default_factory=list, description="When the agent says it is done."
    )
    post_edit: list[HookConfig] = Field(
        default_factory=list,
        description="After an edit: post_tool_use hooks on write_file|edit_file|apply_patch by default.",
    )
    claude_settings: Literal["off", "permissions", "all"] = Field(
        "permissions",
        description=(
            "The workspace's `.claude/settings.json` and `settings.local.json` (Claude Code's): "
            "`permissions` applies their deny and ask rules; `all` also runs their hooks, which run programs "
            "from the repository; `off` ignores them. See docs/hooks.md."
        ),
    )


class CodeRuleConfig(_Section):
    pattern: str = Field(description="A regex on added lines.")
    message: str = Field(description="What the model is told when the pattern matches.")
    severity: Literal["warn", "block"] = Field(
        "warn", description="`warn` appends the message to the result; `block` refuses the edit."
    )


class QualityGateConfig(_Section):
    name: str = Field(description="Shown to the model with the gate's output.")
    command: str | None = Field(None, description="A shell command run in the workspace; exit 0 passes.")
    python: str | None = Field(
        None,
        description=(
            "A kernel check instead of a command: a Python expression evaluated in the notebook's kernel, "
            "with its variables; truthy passes, falsy or an exception fails."
        ),
    )
    notebook: str | None = Field(
        None,
        description=(
            "A notebook check instead: the notebook (relative to the workspace) runs in fresh kernels on the "
            "workspace before the run and now; the same outputs pass."
        ),
    )
    compare: list[str] = Field(
        default_factory=list, description="For `notebook`: variables compared at the end of both runs."
    )
    stability: bool = Field(
        False, description="For `notebook`: run the before side twice; cells that differ there are unstable."
    )
    required: bool = Field(True, description="A failing required gate keeps the run going; others only warn.")
    timeout: int = Field(60, ge=1, le=600, description="Seconds before the gate is killed (and fails).")

    @model_validator(mode="after")
    def _command_or_python(self) -> QualityGateConfig:
        if sum(x is not None for x in (self.command, self.python, self.notebook)) != 1:
            raise ValueError("a quality gate has one of `command`, `python` or `notebook`")
        return self


class GuardrailsConfig(_Section):
    enabled: bool | None = Field(None, description="Defaults to true as soon as any rule is set.")
    protected_files: list[str] = Field(
        default_factory=list, description="Globs of files no tool may change (reading is allowed)."
    )
    sensitive_files: list[str] = Field(
        default_factory=list, description="Globs of files no tool may read or change; cut from outputs."
    )
    blocked_commands: list[str] = Field(
        default_factory=list, description="Regexes of commands refused in every mode."
    )
    max_files_modified: int | None = Field(None, ge=0, description="Most files one run may change.")
    max_lines_changed: int | None = Field(
        None, ge=0, description="Most lines one run may add and remove in all."
    )
    max_commands_executed: int | None = Field(None, ge=0, description="Most commands one run may execute.")
    code_rules: list[CodeRuleConfig] = Field(
        default_factory=list, description="Regexes checked against the code an edit adds."
    )
    quality_gates: list[QualityGateConfig] = Field(
        default_factory=list,
        description="Commands run when the agent says it is done; failing ones send it back.",
    )

    @property
    def active(self) -> bool:
        if self.enabled is not None:
            return self.enabled
        rules = (
            self.protected_files,
            self.sensitive_files,
            self.blocked_commands,
            self.code_rules,
            self.quality_gates,
        )
        limits = (self.max_files_modified, self.max_lines_changed, self.max_commands_executed)
        return any(rules) or any(limit is not None for limit in limits)


class LLMConfig(_Section):
    model: str = Field("gpt-4o-mini", description="Any LiteLLM model string, or scripted/<script.yaml>.")
    api_base: str | None = Field(
        None,
        description="The server's URL, for local or self-hosted models (Ollama: http://localhost:11434).",
    )
    api_key_env: str | None = Field(None, description="Environment variable holding the API key.")
    gateway: bool | None = Field(
        None,
        description=(
            "Call api_base as an OpenAI-compatible gateway (a LiteLLM proxy) through a light HTTP client, "
            "without importing LiteLLM. Unset: on for litellm_proxy/<model> names."
        ),
    )
    timeout: int = Field(
        60,
        ge=1,
        description="Seconds the model may send nothing: a call or stream stalled this long is retried.",
    )
    retries: int = Field(
        2,
        ge=0,
        le=10,
        description="Retries of a failed model call (rate limits, overload, lost connections, stalls).",
    )
    stream: bool = Field(True, description="Stream the answer as it is written.")
    thinking: int | None = Field(
        None,
        ge=1024,
        description=(
            "Let the model think before it answers, with up to this many tokens for it (Claude's and "
            "Gemini's thinking budget; OpenAI and Ollama models take reasoning_effort instead). Thinking "
            "tokens are output, and priced as such."
        ),
    )
    reasoning_effort: ReasoningEffort | None = Field(
        None,
        description="How hard a reasoning model thinks (OpenAI o-series and GPT-5, Gemini, Claude, Ollama).",
    )
    max_tokens: int | None = Field(
        None, ge=1, description="Most tokens one answer may have (the provider's default if unset)."
    )


class AgentSpec(_Section):
    system_prompt: str | None = Field(None, description="Replaces the agent's system prompt.")
    allowed_tools: list[str] | None = Field(
        None, description="The tool names the agent may call (null: all of them)."
    )
    confirm_mode: ConfirmMode | None = Field(
        None, description="The agent's default mode (a cell's --mode wins)."
    )
    max_steps: int | None = Field(None, ge=1, le=1000, description="Most model calls one run may make.")


class CostsConfig(_Section):
    budget_usd: float | None = Field(
        None, ge=0, description="Stop the run when its cost reaches this many dollars."
    )
    budget_tokens: int | None = Field(
        None, ge=0, description="Stop the run when it has used this many tokens."
    )
    warn_at_usd: float | None = Field(
        None, ge=0, description="Warn (and fire budget_warning hooks) at this cost."
    )


class MCPServerConfig(_Section):
    name: str = Field(description="Prefixes its tools: `mcp_<name>_<tool>`.")
    command: str | None = Field(None, description="The program that starts a stdio server.")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables for it.")
    url: str | None = Field(None, description="The URL of a streamable HTTP server (instead of command).")
    token_env: str | None = Field(
        None, description="Environment variable holding a bearer token for the URL."
    )
    timeout: float = Field(60.0, gt=0, le=3600, description="Seconds one tool call may take.")
    startup_timeout: float = Field(
        30.0, gt=0, le=600, description="Seconds to start the server and list its tools."
    )
    restarts: int = Field(
        1, ge=0, le=10, description="Times a server that stopped is started again during one run."
    )


class MCPConfig(_Section):
    servers: list[MCPServerConfig] = Field(
        default_factory=list,
        description="One entry per server: a command (stdio) or a url (streamable HTTP).",
    )


class LoggingConfig(_Section):
    level: Literal["debug", "info", "warning", "error"] = Field(
        "warning", description="Lowest level written to stderr."
    )
    file: Path | None = Field(None, description="Where to write JSON logs, one event per line.")

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value


class NotebookConfig(_Section):
    approval_timeout: float = Field(
        300.0,
        gt=0,
        description=(
            "Seconds a question waits for a click while a front end that shows buttons is there (an "
            "approval, a --step pause, the plan's Build offer); unanswered, it gets its safe default: an "
            "approval is denied, a pause stops the run, a plan is not built."
        ),
    )
    headless_grace: float = Field(
        5.0,
        gt=0,
        le=600,
        description=(
            "Seconds a question waits for a front end that can show buttons to show itself, by any comm "
            "message to the kernel (JupyterLab and Notebook 7 have when they connect, or do within a second "
            "of showing the question). If none has, as in a headless run (nbclient, papermill, nbconvert, "
            "`jupyter execute`), the question gets its safe default then, saying why. Under "
            "jupyter-server-documents, whose pages talk to the kernel but render no widgets, only a page "
            "showing the question counts. Raise it for a front end that is slow to load its widgets."
        ),
    )
    frontend_timeout: float = Field(
        10.0,
        gt=0,
        le=600,
        description=(
            "Seconds to wait for a JupyterLab or Notebook 7 front end to say whether a notebook is open "
            "there, and to read or change it. One that does not answer is dropped until it reconnects, and "
            "fails the call unless the others share the notebook with it (real-time collaboration)."
        ),
    )
    context: bool = Field(
        True,
        description=(
            "Start each %%architect run with an outline of the notebook it runs in (cells, outputs in brief, "
            "what is stale, the cells the task names). `--no-notebook` leaves it out for one cell."
        ),
    )
    context_tokens: int = Field(
        1500, ge=200, le=20_000, description="About how many tokens the notebook outline may take at most."
    )
    provenance: bool = Field(
        True,
        description=(
            "Record in each cell the agent inserts or edits which lines it wrote (run, model, line hashes; "
            "never prompts), for `python -m architect_nb provenance`. A teaching policy may require it."
        ),
    )


class InstructionsConfig(_Section):
    """`instructions: false` turns project instructions off; `instructions: [docs/agents.md]` adds files."""

    enabled: bool = Field(
        True,
        description=(
            "Put the workspace's AGENTS.md and CLAUDE.md into the system prompt, and those of a subfolder "
            "once a tool touches it."
        ),
    )
    files: list[str] = Field(
        default_factory=list, description="More instruction files, relative to the workspace root."
    )
    max_chars: int = Field(
        12_000, ge=500, le=200_000, description="Characters of instructions kept at most, all files together."
    )

    @model_validator(mode="before")
    @classmethod
    def _short_forms(cls, value: object) -> object:
        if isinstance(value, bool):
            return {"enabled": value}
        if isinstance(value, list):
            return {"files": value}
        return value


class KernelConfig(_Section):
    tools: bool = Field(
        True,
        description=(
            "Give the agent the kernel tools (list_variables, inspect_variable, run_python, propose_cell) "
            "when it runs in a kernel."
        ),
    )
    timeout: int = Field(60, ge=1, le=3600, description="Seconds run_python code may run before it stops.")
    write_namespace: bool = Field(
        False,
        description=(
            "Let run_python assign to your variables. Off: its names stay in a scratch namespace for the run."
        ),
    )
    undo_budget_mb: int | None = Field(
        None,
        ge=0,
        description=(
            "Memory for the copies of your variables that undo restores after run_python and run_cell (MB). "
            "Unset: a quarter of the free memory, at most 4 GB."
        ),
    )


class TeachingConfig(_Section):
    mode: TeachingMode = Field(
        "full",
        description=(
            "full: as usual. explain: read, search, list variables and explain; nothing is written. "
            "hints: as explain, and the model guides instead of solving. off: `%%architect` refuses. "
            "The strictest level holds; see docs/classroom.md."
        ),
    )
    message: str = Field(
        "",
        max_length=2000,
        description="The teacher's words, shown when the policy turns the agent off or refuses a write.",
    )
    code_lines: int = Field(
        3, ge=0, le=200, description="hints: longer code blocks in the model's answers are cut from the cell."
    )
    tools: list[str] | None = Field(
        None, description="The only tools the agent may call (names); unset: every tool the mode allows."
    )
    budget_usd: float | None = Field(None, ge=0, description="The most one run may cost, in dollars.")
    require_provenance: bool = Field(
        False, description="Record which lines the agent wrote even where notebook.provenance is off."
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _yaml_off(cls, value: object) -> object:
        """YAML 1.1 reads a bare `off` as false: `mode: off` means off."""
        return "off" if value is False else value


#: The folders Python, test runners, linters and Jupyter keep their caches in: listings and searches skip
#: them (`tools.tree.walk`), and they are never the agent's change.
CACHE_DIR_NAMES = ("__pycache__", ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache", ".ruff_cache")
#: What `checkpoints.others` holds by default: files that other programs write beside the agent's (running
#: the tests writes `__pycache__`), none of them the agent's work.
OTHER_PROGRAMS_FILES = (
    *(f"{name}/" for name in CACHE_DIR_NAMES),
    "*.py[cod]",
    ".hypothesis/",
    ".jupyter_ystore.db*",  # jupyter-collaboration's document store, and SQLite's journal beside it
    ".jupyter/collaboration_sessions.json",  # jupyter-collaboration 5's sessions, in the server's root
)


class CheckpointsConfig(_Section):
    persist: bool = Field(
        True,
        description=(
            "Also keep each run's checkpoints and each thread on disk, for `%architect undo` and "
            "`--thread NAME` after a kernel restart."
        ),
    )
    dir: Path | None = Field(
        None,
        description=(
            "Where; default the user's state folder (`~/.local/state/architect-nb/checkpoints`). "
            "Threads go in its `threads/` folder."
        ),
    )
    keep_days: float = Field(
        14.0, gt=0, description="Saved runs and threads not used for this many days are deleted."
    )
    max_file_bytes: int = Field(
        100 * 1024 * 1024,
        ge=0,
        description=(
            "Larger files are not snapshotted, and cost nothing in the snapshot store; the approval and the "
            "step say undo cannot restore them."
        ),
    )
    max_run_bytes: int = Field(
        1024 * 1024 * 1024,
        ge=0,
        description=(
            "The most new content one run's snapshots keep; files its calls write past it are not "
            "snapshotted, as if over max_file_bytes."
        ),
    )
    include: list[str] = Field(
        default_factory=list,
        description="Paths `.gitignore` hides that snapshots should cover anyway (globs, e.g. `data/*.csv`).",
    )
    others: list[str] = Field(
        default_factory=lambda: list(OTHER_PROGRAMS_FILES),
        description=(
            "Files other programs write in the workspace (bytecode and tool caches, notebook checkpoints, "
            "the collaboration store; gitignore patterns at any depth): never taken for the agent's "
            "changes, snapshotted or restored by undo, unless a file tool names one."
        ),
    )


class AppConfig(_Section):
    """The whole configuration. Every section has defaults, so `AppConfig()` is a working setup."""

    workspace: WorkspaceConfig = Field(
        default_factory=WorkspaceConfig, description="The sandbox every tool is confined to."
    )
    commands: CommandsConfig = Field(
        default_factory=CommandsConfig,
        description="run_command: timeouts, output size, and how commands are classified.",
    )
    sandbox: SandboxConfig = Field(
        default_factory=SandboxConfig,
        description="The OS sandbox run_command runs in (Linux, bubblewrap); see docs/security.md.",
    )
    hooks: HooksConfig = Field(
        default_factory=HooksConfig, description="Shell commands run at lifecycle events; see docs/hooks.md."
    )
    guardrails: GuardrailsConfig = Field(
        default_factory=GuardrailsConfig,
        description="Deterministic rules checked before hooks and confirmation, in every mode.",
    )
    llm: LLMConfig = Field(default_factory=LLMConfig, description="The model and how to reach it.")
    agents: dict[str, AgentSpec] = Field(
        default_factory=dict,
        description="Custom agents, or changes to the built-in build, plan and review agents.",
    )
    costs: CostsConfig = Field(default_factory=CostsConfig, description="Budgets for one run.")
    mcp: MCPConfig = Field(
        default_factory=MCPConfig, description="MCP servers whose tools the agent may call; see docs/mcp.md."
    )
    logging: LoggingConfig = Field(
        default_factory=LoggingConfig, description="Where logs go; secrets are redacted."
    )
    notebook: NotebookConfig = Field(default_factory=NotebookConfig, description="The notebook layer.")
    instructions: InstructionsConfig = Field(
        default_factory=InstructionsConfig,
        description="The project's AGENTS.md and CLAUDE.md in the system prompt; see docs/instructions.md.",
    )
    kernel: KernelConfig = Field(
        default_factory=KernelConfig, description="The agent's view of the live kernel: its tools and limits."
    )
    checkpoints: CheckpointsConfig = Field(
        default_factory=CheckpointsConfig,
        description="What files held before a run changed them, for `%architect undo`.",
    )
    teaching: TeachingConfig = Field(
        default_factory=TeachingConfig,
        description=(
            "A course's rules: what the agent may do. A system file, the workspace, the notebook and "
            "`%architect config` each set one; the strictest holds."
        ),
    )
    # Each level's teaching setting, as `load_config` read them (`teaching_policy.PolicyLevel`s): `teaching`
    # above is their strictest, and the policy says which level set what.
    _teaching_levels: tuple[Any, ...] = PrivateAttr(default=())

    @property
    def teaching_levels(self) -> tuple[Any, ...]:
        return self._teaching_levels

    def set_teaching_levels(self, levels: tuple[Any, ...]) -> None:
        self._teaching_levels = levels
