"""Lifecycle hooks: shell commands the user configures to run around tool calls and other agent events.

The protocol (the design document's, plus Claude Code's JSON so existing hook scripts work unchanged):

* A hook runs as `sh -c COMMAND` in the workspace, in its own process group, with `ARCHITECT_*` environment
  variables and a JSON object on stdin (`hook_event_name`, `tool_name`, `tool_input`, and after a call
  `tool_output`/`tool_response`).
* Exit 0 allows. Stdout may hold a JSON object: `additionalContext`, `updatedInput`, or Claude Code's
  `hookSpecificOutput.{permissionDecision, permissionDecisionReason, updatedInput, additionalContext}` and a
  top-level `decision: "block"` with `reason`. `permissionDecision: "deny"` blocks; `"ask"` makes the engine
  ask a person even in yolo mode; `"allow"` does *not* skip the engine's confirmation (a script cannot
  approve on the user's behalf). `updatedInput` is merged over the current arguments, and the engine
  validates and re-checks the result. Plain-text stdout is ignored; stdout that starts with `{` but is not
  valid JSON is a warning.
* Exit 2 blocks (pre-hooks only); the reason is on stderr. After the fact (post-hooks, notifications) exit 2
  is reported like any other failure.
* Any other exit code, a timeout or bad JSON is a *warning*: it is shown in the result and never blocks.
  A timed-out hook is killed with its whole process group, and so is anything a finished hook left behind.
* `matcher` is a regex matched against the whole tool name (`*` or empty matches all); `file_patterns` are
  globs on the call's files; `{file}` in the command becomes the shell-quoted file path (a hook that needs
  `{file}` is skipped for calls without one). Async hooks run in the background and can neither block nor
  rewrite.
"""

from __future__ import annotations

import contextlib
import enum
import fnmatch
import json
import os
import re
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from architect_nb.config.schema import HookConfig, HooksConfig
from architect_nb.log import get_logger

__all__ = ["LEGACY_POST_EDIT_MATCHER", "HookDecision", "HookEvent", "HookExecutor", "HookResult"]

LEGACY_POST_EDIT_MATCHER = "write_file|edit_file|apply_patch"
_MAX_OUTPUT_BYTES = 64 * 1024  # read at most this much of a hook's stdout or stderr
_MAX_ENV_VALUE = 32 * 1024  # the kernel refuses single environment strings much longer than 128 KiB
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


class HookEvent(enum.StrEnum):
    """The ten lifecycle events; the value is the configuration key."""

    PRE_TOOL_USE = "pre_tool_use"
    POST_TOOL_USE = "post_tool_use"
    PRE_LLM_CALL = "pre_llm_call"
    POST_LLM_CALL = "post_llm_call"
    SESSION_START = "session_start"
    SESSION_END = "session_end"
    ON_ERROR = "on_error"
    BUDGET_WARNING = "budget_warning"
    CONTEXT_COMPRESS = "context_compress"
    AGENT_COMPLETE = "agent_complete"

    @property
    def can_block(self) -> bool:
        return self in (HookEvent.PRE_TOOL_USE, HookEvent.PRE_LLM_CALL)


class HookDecision(enum.StrEnum):
    ALLOW = "allow"
    BLOCK = "block"
    MODIFY = "modify"


@dataclass(slots=True, kw_only=True)
class HookResult:
    """What one hook run decided and said.

    Attributes:
        name: The hook's name (its command when unnamed).
        decision: ALLOW, BLOCK or MODIFY (MODIFY carries `updated_input`).
        reason: Why it blocked or asked (from stderr or the JSON).
        updated_input: Argument changes to apply, merged over the current arguments.
        additional_context: Text for the model.
        ask: The hook asked for a person's confirmation (Claude Code's `permissionDecision: "ask"`).
        warning: Set when the hook failed (exit code, timeout, bad JSON); shown in the result, never a block.
        exit_code: The exit status (None when it timed out or could not start).
        output: Its stdout and stderr, trimmed, for failure reports.
        duration: Seconds it took.
    """

    name: str
    decision: HookDecision = HookDecision.ALLOW
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    additional_context: str = ""
    ask: bool = False
    warning: str = ""
    exit_code: int | None = 0
    output: str = ""
    duration: float = 0.0

    def to_dict(self, event: str = "") -> dict[str, Any]:
        """A JSON-ready summary for the notebook and the transcript (`passed` is false when it failed)."""
        return {
            "name": self.name,
            "event": event,
            "decision": str(self.decision),
            "passed": not self.warning,
            "exit_code": self.exit_code,
            "warning": self.warning,
            "output": self.output,
            "duration_s": round(self.duration, 4),
        }

    def report(self) -> str:
        """The block appended to the tool result the model sees, or '' when there is nothing to say."""
        if self.warning:
            body = f"\n{self.output}" if self.output else ""
            return f"[Hook {self.name}: {self.warning}]{body}"
        if self.additional_context:
            return f"[Hook {self.name}]\n{self.additional_context}"
        return ""


@dataclass(slots=True)
class _Hook:
    config: HookConfig
    name: str
    matcher: re.Pattern[str] | None
    needs_file: bool = field(init=False)

    def __post_init__(self) -> None:
        self.needs_file = "{file}" in self.config.command

    def applies(self, tool_name: str | None, files: Sequence[str]) -> bool:
        if self.matcher is not None and (tool_name is None or not self.matcher.fullmatch(tool_name)):
            return False
        if self.config.file_patterns and not any(
            _glob_hit(pattern, path) for pattern in self.config.file_patterns for path in files
        ):
            return False
        return not (self.needs_file and not files)


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
        config: The `hooks:` section. The legacy `post_edit` list is appended to `post_tool_use` with the
            matcher `write_file|edit_file|apply_patch` (unless it set its own).
        workspace_root: Where hooks run, and what `{file}` paths are relative to.
        extra_env: Variables added to every hook's environment.
    """

    def __init__(
        self, config: HooksConfig, workspace_root: Path, *, extra_env: Mapping[str, str] | None = None
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
                    else hook.model_copy(update={"matcher": LEGACY_POST_EDIT_MATCHER})
                    for hook in config.post_edit
                ]
            hooks = []
            for hook in configs:
                if hook.enabled:
                    name = hook.name or hook.command
                    hooks.append(_Hook(hook, name, _compile_matcher(hook.matcher, name)))
            if hooks:
                self._hooks[event] = hooks
        self._pool: ThreadPoolExecutor | None = None
        self._pending: set[Future[HookResult]] = set()
        self._finished: list[HookResult] = []
        self._lock = threading.Lock()
        self._log = get_logger(__name__)

    def has_hooks(self, event: HookEvent) -> bool:
        return event in self._hooks

    def run_event(self, event: HookEvent, context: Mapping[str, Any]) -> list[HookResult]:
        """Run the hooks of `event` that match `context`, in configured order.

        `context` may hold `tool_name`, `tool_input` (a dict), `tool_output` (text), `files` (paths relative
        to the workspace) and any other JSON-able values, which reach the hook on stdin and, when scalar,
        as `ARCHITECT_<KEY>` variables. For pre-events the first BLOCK stops the chain, and each rewrite is
        merged into `tool_input` before the next hook runs, so rewrites compose.
        """
        hooks = self._hooks.get(event)
        if not hooks:
            return []
        tool_name = context.get("tool_name")
        files = [str(f) for f in context.get("files") or ()]
        ctx = dict(context)
        results: list[HookResult] = []
        for hook in hooks:
            if not hook.applies(tool_name if isinstance(tool_name, str) else None, files):
                continue
            if hook.config.async_:
                self._submit(hook, event, dict(ctx), files)
                continue
            result = self._run_one(hook, event, ctx, files)
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
    ) -> HookResult:
        try:
            return self._spawn(hook, event, ctx, files, background)
        except Exception as exc:  # a hook never breaks the caller
            return HookResult(
                name=hook.name,
                exit_code=None,
                warning=f"FAILED to start ({type(exc).__name__}: {exc})",
            )

    def _spawn(
        self, hook: _Hook, event: HookEvent, ctx: Mapping[str, Any], files: list[str], background: bool
    ) -> HookResult:
        command = hook.config.command
        if hook.needs_file:
            command = command.replace("{file}", shlex.quote(str(self.workspace_root / files[0])))
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
            proc = subprocess.Popen(  # noqa: S602 - hooks are shell commands the user configured
                command,
                shell=True,
                cwd=self.workspace_root,
                env=env,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )
            timed_out = False
            try:
                code: int | None = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                code = None
                _kill_group(proc.pid)
                proc.wait()
            finally:
                _kill_group(proc.pid)  # whatever the hook left running in its group goes with it
            out = _read(stdout)
            err = _read(stderr)
        duration = time.perf_counter() - started
        if timed_out:
            return HookResult(
                name=hook.name,
                exit_code=None,
                duration=duration,
                warning=f"TIMED OUT after {timeout}s and was killed",
                output=_trim(out + err),
            )
        return self._interpret(
            hook.name, event, code=code, out=out, err=err, duration=duration, background=background
        )

    def _environment(
        self, hook: _Hook, event: HookEvent, ctx: Mapping[str, Any], files: list[str]
    ) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.extra_env)
        env["ARCHITECT_EVENT"] = event.value
        env["ARCHITECT_HOOK_NAME"] = hook.name
        env["ARCHITECT_WORKSPACE"] = str(self.workspace_root)
        if files:
            env["ARCHITECT_FILE_PATH"] = str(self.workspace_root / files[0])
            env["ARCHITECT_FILES"] = "\n".join(files)
        for key, value in ctx.items():
            if value is None or key == "files" or not _ENV_KEY.fullmatch(key):
                continue
            text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
            env[f"ARCHITECT_{key.upper()}"] = text[:_MAX_ENV_VALUE].replace("\x00", "")
        return env

    def _interpret(
        self,
        name: str,
        event: HookEvent,
        *,
        code: int | None,
        out: str,
        err: str,
        duration: float,
        background: bool,
    ) -> HookResult:
        result = HookResult(name=name, exit_code=code, duration=duration)
        can_block = event.can_block and not background
        if code == 2 and can_block:
            result.decision = HookDecision.BLOCK
            result.reason = err.strip() or out.strip() or f"hook {name} exited with code 2"
            return result
        if code != 0:
            result.warning = f"FAILED (exit {code})"
            result.output = _trim((out + ("\n" if out and err else "") + err).strip())
            return result
        text = out.strip()
        if not text.startswith("{"):
            return result  # plain text on success is not addressed to us
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("not an object")
        except ValueError:
            result.warning = "printed invalid JSON on stdout; its output was ignored"
            result.output = _trim(text)
            return result
        _apply_json(result, data, can_block)
        return result

    def __repr__(self) -> str:
        counts = {event.value: len(hooks) for event, hooks in self._hooks.items()}
        return f"<HookExecutor {counts}>"


def _apply_json(result: HookResult, data: Mapping[str, Any], can_block: bool) -> None:
    """Map the native and Claude Code JSON fields onto `result`."""
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    context = [c for c in (data.get("additionalContext"), specific.get("additionalContext")) if c]
    result.additional_context = "\n".join(str(c) for c in context)
    updated = specific.get("updatedInput", data.get("updatedInput"))
    permission = specific.get("permissionDecision")
    reason = str(specific.get("permissionDecisionReason") or data.get("reason") or "")
    blocked = permission == "deny" or data.get("decision") == "block"
    if blocked and can_block:
        result.decision = HookDecision.BLOCK
        result.reason = reason or f"hook {result.name} refused the call"
        return
    if blocked and reason:  # after the fact, a "block" is feedback for the model (as in Claude Code)
        result.additional_context = "\n".join(filter(None, [result.additional_context, reason]))
    if permission == "ask" and can_block:
        result.ask = True
        result.reason = reason
    if updated is not None and can_block:
        if isinstance(updated, Mapping):
            result.decision = HookDecision.MODIFY
            result.updated_input = dict(updated)
        else:
            result.warning = "returned an updatedInput that is not a JSON object; it was ignored"


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _read(fh: Any) -> str:
    fh.seek(0)
    data: bytes = fh.read(_MAX_OUTPUT_BYTES + 1)
    text = data[:_MAX_OUTPUT_BYTES].decode("utf-8", "replace")
    return text + ("\n[... output cut]" if len(data) > _MAX_OUTPUT_BYTES else "")


def _trim(text: str, limit: int = 4000) -> str:
    if len(text) <= limit:
        return text
    return text[: limit // 2] + f"\n[... {len(text) - limit} characters cut ...]\n" + text[-limit // 2 :]
