"""The execution side: every tool call goes through one pipeline, `engine.ExecutionEngine`.

Modules, one idea each:

* `engine`: `ExecutionEngine` (the ten-step pipeline) and `build_engine(config)`.
* `steps`: the per-call state and the pipeline steps that need no engine state.
* `policies`: `ConfirmationPolicy` (yolo / confirm-sensitive / confirm-all) and `NoTTYError`.
* `confirm`: the `Confirmer` protocol, `ConfirmationRequest`/`ConfirmationAnswer`, the terminal and scripted
  confirmers, and `show` (arguments made visible).
* `hooks`: `HookExecutor`, `HookEvent`, `HookDecision`, `HookResult`; the protocol is `hook_protocol`.
* `claude_settings`: reading Claude Code's `.claude/settings.json`; `claude_shape`: the table of Claude Code's
  tool and field names, both ways; `claude_permissions`: its permission rules as guardrails and reasons to
  ask; `hook_transcript`: the run's transcript file that Claude-style hooks read.
* `guardrails`: `GuardrailsEngine`.
* `checkpoints`: `CheckpointStore` (undo a run's file changes).
* `audit`: `AuditLog` (one record per call; the run transcript).
* `validators`: `validate_path`, the workspace sandbox.

Errors::

    RuntimeError
     ├── NoTTYError            a confirmation was needed and there is no terminal (policies)
     └── ScriptExhaustedError  a scripted confirmer ran out of answers (confirm)
    ValueError
     └── PathTraversalError    a path reaches outside the workspace (validators)

The engine itself never raises from `execute_tool_call`: each of these becomes a failed `ToolResult`.
"""
