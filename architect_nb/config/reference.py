"""The `.architect.yaml` reference, generated from the schema: every key, its type, default and description.

`docs/configuration.md` holds the output of `render_reference()` between two markers, and a test checks that
it is current: `python -m architect_nb.config.reference docs/configuration.md` rewrites it.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from architect_nb.config.schema import AppConfig

__all__ = ["BEGIN", "END", "reference_rows", "render_reference", "update_file"]

BEGIN = "<!-- BEGIN GENERATED: architect_nb.config.reference -->"
END = "<!-- END GENERATED -->"


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"mapping of {_type_name(args[0])} to {_type_name(args[1])}"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    if annotation is Path:
        return "path"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, Path):
        return f"`{value}`"
    return f"`{json.dumps(value)}`"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, directly, as list items or as mapping values."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


# What a key means where the schema's field has no description yet (a test checks every key here exists).
NOTES: dict[str, str] = {
    "workspace": "The sandbox every tool is confined to.",
    "commands": "run_command: timeouts, output size, and how commands are classified.",
    "hooks": "Shell commands run at lifecycle events; see docs/hooks.md.",
    "hooks.pre_tool_use": "Before a tool call; exit 2 (or JSON) blocks it, JSON may rewrite its arguments.",
    "hooks.post_tool_use": "After a successful tool call; failures are shown to the model, never block.",
    "hooks.pre_llm_call": "Before each model call; may block it.",
    "hooks.post_llm_call": "After each model call.",
    "hooks.session_start": "When a run starts.",
    "hooks.session_end": "When a run ends.",
    "hooks.on_error": "When a run stops on an error.",
    "hooks.budget_warning": "When spending crosses costs.warn_at_usd.",
    "hooks.context_compress": "When old steps are summarised to fit the context window.",
    "hooks.agent_complete": "When the agent says it is done.",
    "hooks.pre_tool_use[].name": "Shown in results and logs (default: the command).",
    "hooks.pre_tool_use[].command": "Run by `sh -c` in the workspace; `{file}` becomes the file's path.",
    "hooks.pre_tool_use[].file_patterns": "Globs on the call's files; empty matches every call.",
    "hooks.pre_tool_use[].timeout": "Seconds before the hook is killed (a warning, never a block).",
    "hooks.pre_tool_use[].async": "Run in the background; it can neither block nor rewrite.",
    "hooks.pre_tool_use[].enabled": "Set false to keep a hook in the file but not run it.",
    "guardrails": "Deterministic rules checked before hooks and confirmation, in every mode.",
    "guardrails.protected_files": "Globs of files no tool may change (reading is allowed).",
    "guardrails.sensitive_files": "Globs of files no tool may read or change; cut from outputs.",
    "guardrails.blocked_commands": "Regexes of commands refused in every mode.",
    "guardrails.max_files_modified": "Most files one run may change.",
    "guardrails.max_lines_changed": "Most lines one run may add and remove in all.",
    "guardrails.max_commands_executed": "Most commands one run may execute.",
    "guardrails.code_rules": "Regexes checked against the code an edit adds.",
    "guardrails.code_rules[].pattern": "A regex on added lines.",
    "guardrails.code_rules[].message": "What the model is told when the pattern matches.",
    "guardrails.code_rules[].severity": "`warn` appends the message to the result; `block` refuses the edit.",
    "guardrails.quality_gates": "Commands run when the agent says it is done; failing ones send it back.",
    "guardrails.quality_gates[].name": "Shown to the model with the gate's output.",
    "guardrails.quality_gates[].command": "A shell command run in the workspace; exit 0 passes.",
    "guardrails.quality_gates[].required": "A failing required gate keeps the run going; others only warn.",
    "guardrails.quality_gates[].timeout": "Seconds before the gate is killed (and fails).",
    "llm": "The model and how to reach it.",
    "llm.api_base": "The server's URL, for local or self-hosted models (Ollama: http://localhost:11434).",
    "llm.timeout": "Seconds one model call may take.",
    "llm.retries": "Retries of a failed model call (rate limits, connection errors).",
    "llm.stream": "Stream the answer as it is written.",
    "agents": "Custom agents, or changes to the built-in build, plan and review agents.",
    "agents.<name>.system_prompt": "Replaces the agent's system prompt.",
    "agents.<name>.allowed_tools": "The tool names the agent may call (null: all of them).",
    "agents.<name>.confirm_mode": "The agent's default mode (a cell's --mode wins).",
    "agents.<name>.max_steps": "Most model calls one run may make.",
    "costs": "Budgets for one run.",
    "costs.budget_usd": "Stop the run when its cost reaches this many dollars.",
    "costs.budget_tokens": "Stop the run when it has used this many tokens.",
    "costs.warn_at_usd": "Warn (and fire budget_warning hooks) at this cost.",
    "mcp": "MCP servers whose tools the agent may call; see docs/mcp.md.",
    "mcp.servers": "One entry per server: a command (stdio) or a url (streamable HTTP).",
    "mcp.servers[].name": "Prefixes its tools: `mcp_<name>_<tool>`.",
    "mcp.servers[].command": "The program that starts a stdio server.",
    "mcp.servers[].args": "Its arguments.",
    "mcp.servers[].env": "Extra environment variables for it.",
    "mcp.servers[].url": "The URL of a streamable HTTP server (instead of command).",
    "mcp.servers[].token_env": "Environment variable holding a bearer token for the URL.",
    "logging": "Where logs go; secrets are redacted.",
    "logging.level": "Lowest level written to stderr.",
    "notebook": "The notebook layer.",
    "checkpoints": "What files held before a run changed them, for `%architect undo`.",
}


def reference_rows(
    model: type[BaseModel] = AppConfig, prefix: str = "", seen: dict[type[BaseModel], str] | None = None
) -> list[tuple[str, str, str, str]]:
    """(key, type, default, description) for every key under `model`, depth first, in schema order.

    A model met again (each hook event's entries) is described once; later rows point to the first.
    """
    seen = {} if seen is None else seen
    rows: list[tuple[str, str, str, str]] = []
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        nested = _model_of(field.annotation)
        description = field.description or NOTES.get(key, "")
        origin = typing.get_origin(field.annotation)
        suffix = "[]" if origin is list else ".<name>" if origin is dict else ""
        if nested is not None and nested in seen:
            description += f" Entries as in `{seen[nested]}`."
        rows.append((key, _type_name(field.annotation), _default(field), description.strip()))
        if nested is not None and nested not in seen:
            seen[nested] = key + suffix
            rows.extend(reference_rows(nested, key + suffix + ".", seen))
    return rows


def render_reference() -> str:
    """The Markdown table of every key, between the markers."""
    lines = [BEGIN, "", "| key | type | default | meaning |", "|---|---|---|---|"]
    for key, kind, default, description in reference_rows():
        cells = (f"`{key}`", kind, default, description)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += ["", END]
    return "\n".join(lines)


def update_file(path: Path) -> bool:
    """Rewrite the generated part of `path`; True if it changed."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    new = head + render_reference() + tail
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {'updated' if update_file(Path(arg)) else 'already current'}")
