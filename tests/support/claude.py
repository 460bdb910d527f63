"""Claude Code hooks as Claude Code's documentation and repository write them, and a workspace that holds them
in `.claude/settings.json` (not a test module itself)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from architect_nb.config import AppConfig, load_config
from tests.support.agent import copy_sample_project

# The PreToolUse example of Claude Code's repository (examples/hooks/bash_command_validator_example.py),
# trimmed to its first rule: grep is refused in favour of rg, with exit code 2.
BASH_VALIDATOR = r"""#!/usr/bin/env python3
import json
import re
import sys

_VALIDATION_RULES = [
    (r"^grep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance and features"),
]


def _validate_command(command: str) -> list[str]:
    return [message for pattern, message in _VALIDATION_RULES if re.search(pattern, command)]


def main():
    try:
        input_data = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
        sys.exit(1)
    if input_data.get("tool_name", "") != "Bash":
        sys.exit(0)
    command = input_data.get("tool_input", {}).get("command", "")
    if not command:
        sys.exit(0)
    issues = _validate_command(command)
    if issues:
        for message in issues:
            print(f"• {message}", file=sys.stderr)
        # Exit code 2 blocks tool call and shows stderr to Claude
        sys.exit(2)


if __name__ == "__main__":
    main()
"""

# A protected-path check on Edit|Write that answers with Claude Code's JSON instead of an exit code.
PROTECT_PATHS = """#!/usr/bin/env python3
import json
import sys

input_data = json.load(sys.stdin)
file_path = input_data.get("tool_input", {}).get("file_path", "")
if any(part in file_path for part in [".env", "package-lock.json", ".git/"]):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"{file_path} is a protected file; leave it alone",
        }
    }))
sys.exit(0)
"""

# The PostToolUse formatter of Claude Code's hooks guide, with ruff in place of prettier: jq reads the path.
FORMATTER = """#!/bin/sh
jq -r '.tool_input.file_path' | {
  read file_path
  if echo "$file_path" | grep -q '\\.py$'; then ruff format --quiet "$file_path"; fi
}
"""

# A PreToolUse hook that rewrites the command through updatedInput: `rm FILE` moves it to .trash/ instead.
SAFE_RM = r"""#!/usr/bin/env python3
import json
import re
import sys

data = json.load(sys.stdin)
command = data["tool_input"].get("command", "")
match = re.fullmatch(r"rm (?:-f )?(\S+)", command.strip())
if match:
    command = f"mkdir -p .trash && mv {match.group(1)} .trash/"
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "rm moves files to .trash in this repository",
            "updatedInput": {**data["tool_input"], "command": command},
        }
    }))
"""

# A Stop hook that reads the transcript and sends Claude back once if the tests were not run.
TESTS_BEFORE_STOP = """#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
if data.get("stop_hook_active"):
    sys.exit(0)
with open(data["transcript_path"]) as fh:
    transcript = json.load(fh)
ran = [e for e in transcript["events"] if e["kind"] == "tool_call" and "pytest" in json.dumps(e["arguments"])]
if not ran:
    print("Run the tests (python -m pytest -q) before you finish.", file=sys.stderr)
    sys.exit(2)
"""

# Records what it reads on stdin, one JSON line per run (shell and jq, as the hooks guide's logging example).
RECORD = """#!/bin/sh
jq -c . >> "$CLAUDE_PROJECT_DIR/.claude/seen.jsonl"
"""


def command_hook(script: str, **extra: Any) -> dict[str, Any]:
    """One `type: command` entry that runs `.claude/hooks/<script>` as the hooks guide writes it."""
    runner = "python3 " if script.endswith(".py") else ""
    return {"type": "command", "command": f'{runner}"$CLAUDE_PROJECT_DIR"/.claude/hooks/{script}', **extra}


def claude_workspace(
    dest: Path,
    hooks: dict[str, list[dict[str, Any]]] | None = None,
    scripts: dict[str, str] | None = None,
    permissions: dict[str, list[str]] | None = None,
    settings_file: str = "settings.json",
) -> Path:
    """The sample project with `.claude/<settings_file>` and executable `.claude/hooks/<name>` scripts."""
    project = dest if dest.exists() else copy_sample_project(dest)
    folder = project / ".claude" / "hooks"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (scripts or {}).items():
        path = folder / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    settings: dict[str, Any] = {}
    if hooks is not None:
        settings["hooks"] = hooks
    if permissions is not None:
        settings["permissions"] = permissions
    (project / ".claude" / settings_file).write_text(json.dumps(settings, indent=2))
    return project


def claude_config(project: Path, use: str = "all", **overrides: Any) -> AppConfig:
    return load_config(
        overrides={"workspace.root": str(project), "hooks.claude_settings": use, **overrides}, environ={}
    )


def seen(project: Path) -> list[dict[str, Any]]:
    """What the RECORD hook read, in order."""
    path = project / ".claude" / "seen.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
