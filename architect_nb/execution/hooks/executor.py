"""Lifecycle hooks: shell commands the user configures to run around tool calls and other agent events.

The protocol (exit codes, JSON output, Claude Code's fields) is `architect_nb.execution.hooks.protocol`; this
module runs hooks:

* A hook runs as `sh -c COMMAND` in the workspace, in its own process group, with `ARCHITECT_*` environment
  variables and a JSON object on stdin (`hook_event_name`, `tool_name`, `tool_input`, and after a call
  `tool_output`/`tool_response`). A timed-out hook is killed with its whole process group, and so is anything
  a finished hook left behind.
* `matcher` is a regex matched against the whole tool name (`*` or empty matches all); `file_patterns` are
  globs on the call's files; `{file}` in the command becomes the shell-quoted file path (a hook that needs
  `{file}` is skipped for calls without one). Async hooks run in the background and can neither block nor
  rewrite.
* Claude-style hooks (from `.claude/settings.json`, see `claude_settings`) run after
  the native hooks of their event and get Claude Code's input instead: `session_id`, `transcript_path`, `cwd`,
  `hook_event_name` in Claude Code's names, and the call in Claude Code's names
  (`claude_shape`), with `$CLAUDE_PROJECT_DIR` set. Their `matcher` is matched against
  Claude Code's tool name, and an `updatedInput` they return is mapped back into our argument names.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import shlex
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from architect_nb.config.schema import HookConfig, HooksConfig
from architect_nb.execution.hooks.claude_settings import ClaudeEvent, ClaudeHook
from architect_nb.execution.hooks.claude_shape import ClaudeCall, claude_call, claude_response, our_changes
from architect_nb.execution.hooks.protocol import (
    HookDecision,
    HookEvent,
    HookResult,
    interpret_output,
    trim,
)
from architect_nb.execution.hooks.transcript import HookTranscript
from architect_nb.log import get_logger
from architect_nb.process_group import process_group, wait_or_kill
from architect_nb.redaction import default_redactor

__all__ = ["POST_EDIT_MATCHER", "HookDecision", "HookEvent", "HookExecutor", "HookResult", "TranscriptSource"]

#: What a `hooks.post_edit` entry matches unless it sets its own matcher: the editing tools.
POST_EDIT_MATCHER = "write_file|edit_file|apply_patch"
#: The run's transcript, as JSON-able data, for the Claude-style hooks that read it (`transcript_path`).
TranscriptSource = Callable[[], Any]
_MAX_OUTPUT_BYTES = 64 * 1024  # read at most this much of a hook's stdout or stderr
_MAX_ENV_VALUE = 32 * 1024  # the kernel refuses single environment strings much longer than 128 KiB
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


@dataclass(slots=True)
class _Hook:
    config: HookConfig
    name: str
    matcher: re.Pattern[str] | None
    claude: ClaudeEvent | None = None  # a Claude-style hook, and its event in Claude Code's terms
    needs_file: bool = field(init=False)

    def __post_init__(self) -> None:
        self.needs_file = self.claude is None and "{file}" in self.config.command

    def applies(self, tool_name: str | None, files: Sequence[str]) -> bool:
        if self.matcher is not None and (tool_name is None or not self.matcher.fullmatch(tool_name)):
            return False
        if self.config.file_patterns and not any(
            _glob_hit(pattern, path) for pattern in self.config.file_patterns for path in files
        ):
            return False
        return not (self.needs_file and not files)


def _subject(
    hook: _Hook, tool_name: str | None, call: ClaudeCall | None, ctx: Mapping[str, Any]
) -> str | None:
    """What the hook's matcher is matched against: the tool's name, in Claude Code's names for its hooks, or
    for SessionStart the source: `startup` for a new thread, `resume` for a follow-up cell."""
    if hook.claude is None:
        return tool_name
    if hook.claude.matches == "source":
        return _session_source(ctx)
    return call.tool_name if call is not None else tool_name


def _session_source(ctx: Mapping[str, Any]) -> str:
    return "resume" if ctx.get("source") == "resume" else "startup"


def _glob_hit(pattern: str, path: str) -> bool:
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern)


def _compile_matcher(matcher: str, name: str) -> re.Pattern[str] | None:
    if matcher in ("", "*", ".*"):
        return None
    try:
        return re.compile(matcher)
    except re.error as exc:
        raise ValueError(f"Hook {name!r} has an invalid matcher regex {matcher!r}: {exc}.") from exc


class HookExecutor:
    """Runs the configured hooks of each event, in order. Thread-safe; never raises from `run_event`.

    Args:
        config: The `hooks:` section. Its `post_edit` list (the design document's hooks after edits) joins
            `post_tool_use`, matching `write_file|edit_file|apply_patch` unless an entry sets its matcher.
        workspace_root: Where hooks run, and what `{file}` paths are relative to.
        extra_env: Variables added to every hook's environment.
        claude_hooks: Claude-style hooks, run after the native ones of their event.
        transcript: Where the run's transcript is written for Claude-style hooks (`transcript_path`); by
            default a private temporary folder. Unused without Claude-style hooks.
    """

    def __init__(
        self,
        config: HooksConfig,
        workspace_root: Path,
        *,
        extra_env: Mapping[str, str] | None = None,
        claude_hooks: Sequence[ClaudeHook] = (),
        transcript: HookTranscript | None = None,
    ) -> None:
        self.workspace_root = Path(os.path.realpath(workspace_root))
        self.extra_env = dict(extra_env or {})
        self._hooks: dict[HookEvent, list[_Hook]] = {}
        for event in HookEvent:
            configs = list(getattr(config, event.value))
            if event is HookEvent.POST_TOOL_USE:
                configs += [
                    hook
                    if "matcher" in hook.model_fields_set
                    else hook.model_copy(update={"matcher": POST_EDIT_MATCHER})
                    for hook in config.post_edit
                ]
            hooks = []
            for hook in configs:
                if hook.enabled:
                    name = hook.name or hook.command
                    hooks.append(_Hook(hook, name, _compile_matcher(hook.matcher, name)))
            if hooks:
                self._hooks[event] = hooks
        for claude in claude_hooks:
            name = claude.command if len(claude.command) <= 80 else claude.command[:77] + "..."
            settings = HookConfig(name=name, command=claude.command, timeout=claude.timeout)
            matcher = _compile_matcher(claude.matcher, name)
            hook = _Hook(settings, name, matcher, claude.event)
            self._hooks.setdefault(claude.event.event, []).append(hook)
        self._transcript = (transcript or HookTranscript(None, self.workspace_root)) if claude_hooks else None
        self._pool: ThreadPoolExecutor | None = None
        self._pending: set[Future[HookResult]] = set()
        self._finished: list[HookResult] = []
        self._lock = threading.Lock()
        self._log = get_logger(__name__)

    def has_hooks(self, event: HookEvent) -> bool:
        return event in self._hooks

    def run_event(
        self,
        event: HookEvent,
        context: Mapping[str, Any],
        *,
        tool: object | None = None,
        transcript: TranscriptSource | None = None,
    ) -> list[HookResult]:
        """Run the hooks of `event` that match `context`, in configured order.

        `context` may hold `tool_name`, `tool_input` (a dict), `tool_output` (text), `files` (paths relative
        to the workspace) and any other JSON-able values, which reach the hook on stdin and, when scalar,
        as `ARCHITECT_<KEY>` variables. `tool` is the tool object, from which Claude-style hooks learn an MCP
        tool's server; `transcript` gives the run's transcript to Claude-style hooks that read it (none: an
        empty one). For pre-events the first BLOCK stops the chain, and each rewrite is merged into
        `tool_input` before the next hook runs, so rewrites compose.
        """
        hooks = self._hooks.get(event)
        if not hooks:
            return []
        tool_name = context.get("tool_name")
        tool_name = tool_name if isinstance(tool_name, str) else None
        files = [str(f) for f in context.get("files") or ()]
        ctx = dict(context)
        results: list[HookResult] = []
        for hook in hooks:
            call = self._claude_call(hook, tool if tool is not None else tool_name, ctx)
            if not hook.applies(_subject(hook, tool_name, call, ctx), files):
                continue
            if hook.config.async_:
                self._submit(hook, event, dict(ctx), files)
                continue
            result = self._run_one(hook, event, ctx, files, call=call, transcript=transcript)
            results.append(result)
            if result.decision is HookDecision.BLOCK:
                break
            if result.updated_input is not None:
                current = ctx.get("tool_input")
                ctx["tool_input"] = {
                    **(current if isinstance(current, Mapping) else {}),
                    **result.updated_input,
                }
        return results

    def wait_async(self, timeout: float | None = None) -> list[HookResult]:
        """Wait for the background hooks started so far; return the results not collected before, in order."""
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            with contextlib.suppress(Exception):
                future.result(timeout=timeout)
        with self._lock:
            done, self._finished = self._finished, []
        return done

    def close(self) -> None:
        """Stop taking background hooks; running ones finish on their own (each has its timeout)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    # ------------------------------------------------------------------ running one hook

    def _submit(self, hook: _Hook, event: HookEvent, ctx: dict[str, Any], files: list[str]) -> None:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="architect-hook")
            future = self._pool.submit(self._run_one, hook, event, ctx, files, True)
            self._pending.add(future)
        future.add_done_callback(self._async_done)

    def _async_done(self, future: Future[HookResult]) -> None:
        try:
            result = future.result()
        except Exception:  # cancelled at shutdown; _run_one itself never raises
            result = None
        with self._lock:
            self._pending.discard(future)
            if result is not None:
                self._finished.append(result)
        if result is not None and result.warning:
            self._log.warning("async_hook_failed", hook=result.name, problem=result.warning)

    def _run_one(
        self,
        hook: _Hook,
        event: HookEvent,
        ctx: Mapping[str, Any],
        files: list[str],
        background: bool = False,
        *,
        call: ClaudeCall | None = None,
        transcript: TranscriptSource | None = None,
    ) -> HookResult:
        try:
            return self._spawn(hook, event, ctx, files, background, call, transcript)
        except Exception as exc:  # a hook never breaks the caller
            return HookResult(
                name=hook.name,
                exit_code=None,
                warning=f"FAILED to start ({type(exc).__name__}: {exc})",
            )

    def _spawn(
        self,
        hook: _Hook,
        event: HookEvent,
        ctx: Mapping[str, Any],
        files: list[str],
        background: bool,
        call: ClaudeCall | None,
        transcript: TranscriptSource | None,
    ) -> HookResult:
        command = hook.config.command
        if hook.needs_file:
            command = command.replace("{file}", shlex.quote(str(self.workspace_root / files[0])))
        if hook.claude is not None:
            payload = self._claude_payload(hook.claude, ctx, call, transcript)
        else:
            payload = {"hook_event_name": event.value, "cwd": str(self.workspace_root), **ctx}
            if "tool_output" in payload:
                payload["tool_response"] = payload["tool_output"]
        env = self._environment(hook, event, ctx, files)
        started = time.perf_counter()
        timeout = hook.config.timeout
        with (
            tempfile.TemporaryFile() as stdin,
            tempfile.TemporaryFile() as stdout,
            tempfile.TemporaryFile() as stderr,
        ):
            # Files, not pipes: a grandchild that keeps a pipe open cannot make us wait, and a hook that
            # never reads its stdin cannot block us on a full pipe.
            stdin.write(json.dumps(payload, default=str, ensure_ascii=False).encode("utf-8", "replace"))
            stdin.seek(0)
            with process_group(  # noqa: S604 - hooks are shell commands the person configured
                command,
                shell=True,
                cwd=self.workspace_root,
                env=env,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
            ) as proc:
                code = wait_or_kill(proc, timeout)
            timed_out = code is None
            out = _read(stdout)
            err = _read(stderr)
        duration = time.perf_counter() - started
        if timed_out:
            return HookResult(
                name=hook.name,
                exit_code=None,
                duration=duration,
                warning=f"TIMED OUT after {timeout}s and was killed",
                output=trim(out + err),
            )
        claude = hook.claude
        result = interpret_output(
            hook.name,
            event,
            code=code,
            out=out,
            err=err,
            duration=duration,
            background=background,
            can_block=claude.can_block if claude is not None else None,
            stdout_is_context=claude is not None and claude.stdout_is_context,
        )
        if claude is not None and call is not None and result.updated_input is not None:
            self._map_back(result, call)
        return result

    # ------------------------------------------------------------------ Claude-style hooks

    def _claude_call(self, hook: _Hook, tool: object | None, ctx: Mapping[str, Any]) -> ClaudeCall | None:
        if hook.claude is None or hook.claude.matches != "tool" or tool is None:
            return None
        arguments = ctx.get("tool_input")
        return claude_call(tool, arguments if isinstance(arguments, Mapping) else {}, self.workspace_root)

    def _claude_payload(
        self,
        claude: ClaudeEvent,
        ctx: Mapping[str, Any],
        call: ClaudeCall | None,
        transcript: TranscriptSource | None,
    ) -> dict[str, Any]:
        """Claude Code's hook input: what a hook written for Claude Code reads on stdin."""
        run_id = str(ctx.get("run_id") or "")
        path = self._transcript.write(run_id, transcript) if self._transcript is not None else ""
        payload: dict[str, Any] = {
            "session_id": run_id,
            "transcript_path": path,
            "cwd": str(self.workspace_root),
            "hook_event_name": claude.name,
        }
        if call is not None:
            payload["tool_name"] = call.tool_name
            payload["tool_input"] = call.tool_input
            if claude.event is HookEvent.POST_TOOL_USE:
                payload["tool_response"] = claude_response(call, str(ctx.get("tool_output") or ""))
        elif claude.name == "SessionStart":
            payload["source"] = _session_source(ctx)
        elif claude.name == "UserPromptSubmit":
            payload["prompt"] = str(ctx.get("task") or "")
        elif claude.name == "Stop":
            payload["stop_hook_active"] = bool(ctx.get("stop_hook_active"))
        return payload

    def _map_back(self, result: HookResult, call: ClaudeCall) -> None:
        """Turn a Claude-style `updatedInput` into the changes it makes, in our argument names."""
        changes, refused = our_changes(call, result.updated_input or {}, self.workspace_root)
        result.updated_input = changes or None
        if not changes:
            result.decision = HookDecision.ALLOW
        if refused:
            result.warning = (
                f"returned updatedInput fields that cannot be changed here ({', '.join(refused)}); "
                "they were ignored"
            )

    def _environment(
        self, hook: _Hook, event: HookEvent, ctx: Mapping[str, Any], files: list[str]
    ) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.extra_env)
        env["ARCHITECT_EVENT"] = event.value
        env["ARCHITECT_HOOK_NAME"] = hook.name
        env["ARCHITECT_WORKSPACE"] = str(self.workspace_root)
        if hook.claude is not None:
            env["CLAUDE_PROJECT_DIR"] = str(self.workspace_root)
        if files:
            env["ARCHITECT_FILE_PATH"] = str(self.workspace_root / files[0])
            env["ARCHITECT_FILES"] = "\n".join(files)
        for key, value in ctx.items():
            if value is None or key == "files" or not _ENV_KEY.fullmatch(key):
                continue
            text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
            env[f"ARCHITECT_{key.upper()}"] = text[:_MAX_ENV_VALUE].replace("\x00", "")
        return env

    def __repr__(self) -> str:
        counts = {event.value: len(hooks) for event, hooks in self._hooks.items()}
        return f"<HookExecutor {counts}>"


def _read(fh: Any) -> str:
    fh.seek(0)
    data: bytes = fh.read(_MAX_OUTPUT_BYTES + 1)
    text = data[:_MAX_OUTPUT_BYTES].decode("utf-8", "replace")
    if len(data) <= _MAX_OUTPUT_BYTES:
        return text
    return default_redactor().redact_cut(text, cut_end=True) + "\n[... output cut]"  # no fragment of a secret
