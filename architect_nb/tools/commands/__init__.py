"""run_command and its safety: the blocklist, the safe/dev/dangerous classifier and confined execution.

- `run_command`: the tool; `classify_command` is what the engine asks before confirming.
- `classifier`: parses the command and judges every simple command in it (layers 1 and 2).
- `shell_parse` and `shell_words`: tree-sitter-bash into the simple commands bash would run.
- `wrappers`: programs that run another command (`env`, `xargs`, `find -exec`, `bash -c`, ...).
- `rules` and `checks`: the rule tables, and the options that move a safe program out of `safe`.
- `programs`: per-program models of options, writes and walks, which the guardrails judge files with.
- `outside`: path arguments that lead outside the workspace, which are never `safe`.
- `blocklist`: refused in every mode, yolo included.
- `git_config_risk`: whether a repository's git config makes read-only git commands run programs.
- `process`: one command in its own process group, with a deadline and bounded output (layers 3 and 4).
- `sandbox`: the OS sandbox (bubblewrap) each command runs in (layer 5); `prepare_sandbox` gives the argv
  prefix or why it cannot. `sandbox_paths` lists the credential folders it hides, `workspace_scan` the
  workspace's sensitive and protected files.

- `command_tool`: what makes a tool a shell command to the engine (`as_command_tool`).

Depends on the core, `architect_nb.config` and `architect_nb.paths` (the path gate and the file globs).
"""

from architect_nb.tools.commands.run_command import (
    CommandVerdict,
    RunCommandArgs,
    RunCommandTool,
    Sensitivity,
    classify_command,
)

__all__ = ["CommandVerdict", "RunCommandArgs", "RunCommandTool", "Sensitivity", "classify_command"]
