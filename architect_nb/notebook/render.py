"""The static output of a run: `_repr_mimebundle_` with the transcript JSON, HTML and plain text.

The HTML uses inline styles only (no script, no stylesheet, no network resource), so a saved notebook reads
the same on GitHub, in nbviewer, VS Code and nbconvert. Everything passes the secret redactor and is escaped.
The same fragments (`tool_card_html`, `diff_html`, ...) draw the live view, so live and saved look alike.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from architect_nb.agent.events import RUN_MIME_TYPE
from architect_nb.notebook.event_view import (
    _DECISIONS,
    _changes,
    _rewinds,
    _undoable,
    thread_line,
    tokens_text,
    typed_path,
)
from architect_nb.notebook.text_render import _plain
from architect_nb.redaction import default_redactor

__all__ = [
    "MessageOutput",
    "RunOutput",
    "diff_html",
    "events_html",
    "hooks_html",
    "review_html",
    "status_badge",
    "summary_html",
    "tokens_text",
    "tool_card_html",
    "typed_path",
]

_OUTPUT_CAP = 4000  # characters of a tool's output shown in the HTML (the JSON keeps it whole)
# Lines of a diff shown in a run's HTML: a 5,000-line diff would otherwise double the saved notebook and be
# resent with every live redraw. The approval prompt shows the whole diff (scrolling): it is what is approved.
_DIFF_LINES_CAP = 400
_COLLAPSE_LINES = 12
# Diff lines of the review list in a run's HTML, all files together: each tool card has its own diff already,
# and a run that changed 200 files must not make a 10 MB notebook. Past it, files are listed without a diff.
_REVIEW_LINES_CAP = 2000
_NOTE = "color:#6e7781;font-size:12px"
_MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px"
_PRE = f"margin:4px 0;padding:6px;white-space:pre-wrap;word-break:break-word;{_MONO}"
_CARD = "border:1px solid #d0d7de;border-radius:6px;padding:6px 8px;margin:4px 0"
_STATUS_COLOURS = {
    "ok": "#1a7f37",
    "success": "#1a7f37",
    "running": "#6e7781",
    "failed": "#cf222e",
    "denied": "#bc4c00",
    "blocked": "#cf222e",
    "aborted": "#cf222e",
    "interrupted": "#cf222e",
    "dry_run": "#8250df",
    "partial": "#bc4c00",
    "added": "#1a7f37",
    "deleted": "#cf222e",
    "modified": "#6e7781",
}


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def status_badge(status: str) -> str:
    colour = _STATUS_COLOURS.get(status, "#6e7781")
    return (
        f'<span style="color:#fff;background:{colour};border-radius:10px;padding:0 7px;'
        f'font-size:11px">{_e(status)}</span>'
    )


def _diff_line_style(line: str) -> str:
    if line.startswith(("+++", "---", "diff ", "index ")):
        return "font-weight:bold;color:#24292f"
    if line.startswith("@@"):
        return "color:#0550ae;background:#ddf4ff"
    if line.startswith("+"):
        return "color:#116329;background:#dafbe1"
    if line.startswith("-"):
        return "color:#82071e;background:#ffebe9"
    return "color:#24292f"


def diff_html(diff: str, *, max_lines: int | None = None, scroll: bool = False) -> str:
    """A unified diff, each line coloured by its kind (added, removed, hunk, header).

    `max_lines` cuts a long diff with a note saying where the rest is (the run's JSON keeps it whole, and the
    labextension shows all of it); `scroll` keeps every line but in a box of bounded height.
    """
    all_lines = diff.rstrip("\n").split("\n")
    shown = all_lines if max_lines is None else all_lines[:max_lines]
    lines = "".join(
        f'<span style="display:block;{_diff_line_style(line)}">{_e(_visible(line)) or "&nbsp;"}</span>'
        for line in shown
    )
    if len(shown) < len(all_lines):
        more = len(all_lines) - len(shown)
        lines += (
            f'<span style="display:block;color:#6e7781">... {more:,} more lines; the whole diff is in the '
            "run's transcript (JupyterLab's architect-nb extension shows it)</span>"
        )
    box = ";max-height:420px;overflow:auto" if scroll else ""
    return f'<pre style="{_PRE};background:#f6f8fa{box}">{lines}</pre>'


_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


def image_html(image: Mapping[str, Any]) -> str:
    """A PNG a tool made (a plot from run_python), inline; anything but plain base64 PNG is dropped."""
    data, alt = str(image.get("data", "")), str(image.get("alt", "image"))
    if image.get("mime") != "image/png" or not _BASE64.match(data):
        return ""
    return f'<div><img alt="{_e(alt)}" style="max-width:100%" src="data:image/png;base64,{data}"></div>'


def code_html(code: str, *, max_height: int = 360) -> str:
    """Python code with syntax colouring (inline styles, so it survives in saved HTML), in a scroll box."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    body = highlight(code, PythonLexer(), HtmlFormatter(noclasses=True, nowrap=True, style="default"))
    return (
        f'<pre style="margin:2px 0;padding:4px 6px;background:#f6f8fa;border:1px solid #d0d7de;'
        f'max-height:{max_height}px;overflow:auto;font-size:12px;white-space:pre">{body}</pre>'
    )


def _collapsible(title: str, body: str, *, open_: bool = False) -> str:
    """A `<details>` block for long text: GitHub, nbviewer and VS Code all render it collapsed."""
    return (
        f'<details{" open" if open_ else ""}><summary style="cursor:pointer">{title}</summary>'
        f'<pre style="{_PRE}">{_e(body)}</pre></details>'
    )


def _text_block(title: str, text: str) -> str:
    if not text:
        return ""
    if len(text) > _OUTPUT_CAP:
        text = text[:_OUTPUT_CAP] + f"\n... [{len(text) - _OUTPUT_CAP} more characters in the transcript]"
    if text.count("\n") >= _COLLAPSE_LINES:
        return _collapsible(f"{_e(title)} ({text.count(chr(10)) + 1} lines)", _visible(text))
    return f'<pre style="{_PRE}">{_e(_visible(text))}</pre>'


def _visible(text: str) -> str:
    """Control, ANSI, bidi and zero-width characters as escapes (tabs and line ends kept), as the approval
    prompt shows arguments: a diff or an output must not hide or reorder what it says."""
    from architect_nb.execution.confirmation.confirmers import show_block

    return show_block(text)


def hooks_html(hooks: Sequence[Mapping[str, Any]]) -> str:
    """Hook results: pass or fail with the hook's name; long output collapsed."""
    parts = []
    for hook in hooks:
        if "passed" in hook:  # the engine's HookResult.to_dict()
            failed = not hook["passed"]
        else:
            failed = bool(hook.get("warning")) or hook.get("exit_code") not in (0, None)
        name = _e(hook.get("name", "hook"))
        badge = status_badge("failed" if failed else "ok")
        warning = f' <span style="color:#9a6700">{_e(hook["warning"])}</span>' if hook.get("warning") else ""
        output = str(hook.get("output") or hook.get("reason") or "")
        parts.append(
            f"<div>hook {name} {badge}{warning}</div>" + _text_block(f"hook {hook.get('name', '')}", output)
        )
    return "".join(parts)


def _args_text(arguments: Mapping[str, Any]) -> str:
    from architect_nb.execution.confirmation.confirmers import show

    lines = []
    for key, value in arguments.items():
        if key == "code" and isinstance(value, str):
            continue  # shown whole, highlighted, by tool_card_html
        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > 400:
            text = text[:400] + f"... [{len(text) - 400} more characters]"
        lines.append(f"{show(str(key))}={show(text)}")
    return "\n".join(lines)


def tool_card_html(
    *,
    tool: str,
    arguments: Mapping[str, Any],
    status: str = "running",
    duration_s: float | None = None,
    output: str = "",
    error: str | None = None,
    diff: str | None = None,
    hooks: Sequence[Mapping[str, Any]] = (),
    images: Sequence[Mapping[str, Any]] = (),
    sandboxed: bool | None = None,
    changed_files: Sequence[str] = (),
) -> str:
    """One tool call: tool, arguments (code highlighted), status, duration and, for a command, whether it ran
    in the OS sandbox; then the files it changed, the diff, hook results, output and the images it made."""
    from architect_nb.execution.confirmation.confirmers import show, show_block

    took = f' <span style="color:#6e7781">{duration_s:.2f} s</span>' if duration_s is not None else ""
    label = _sandbox_label(sandboxed)
    head = f'<div><b style="{_MONO}">{_e(tool)}</b> {status_badge(status)}{took}{label}</div>'
    shown = _args_text(arguments)
    args = f'<pre style="{_PRE};color:#57606a">{_e(shown)}</pre>' if shown else ""
    code = arguments.get("code")
    if isinstance(code, str):
        args += code_html(show_block(code), max_height=240)
    body = ""
    if changed_files:
        names = ", ".join(f"<code>{_e(show(f))}</code>" for f in changed_files)
        body += f'<div style="color:#57606a;font-size:12px">Changed: {names}</div>'
    body += diff_html(diff, max_lines=_DIFF_LINES_CAP) if diff else ""
    body += hooks_html(hooks)
    if error and status in ("blocked", "denied", "aborted"):
        body += f'<div style="color:{_STATUS_COLOURS.get(status, "#cf222e")}">{_e(error)}</div>'
    elif error:
        body += _text_block("error", error)
    if output and not diff:
        body += _text_block("output", output)
    body += "".join(image_html(image) for image in images)
    return f'<div style="{_CARD}">{head}{args}{body}</div>'


def _sandbox_label(sandboxed: bool | None) -> str:
    if sandboxed is None:
        return ""
    if sandboxed:
        return ' <span style="color:#1a7f37;font-size:11px">sandboxed</span>'
    return ' <span style="color:#9a6700;font-size:11px">not sandboxed</span>'


def summary_html(finished: Mapping[str, Any]) -> str:
    """The final summary: status, stop reason, tokens, cost and time, what undo does not cover, and the review
    list (or, from kernels before it, the names of the files changed)."""
    changes = _changes(finished)
    files = finished.get("files_changed") or []
    file_list = ", ".join(f"<code>{_e(f)}</code>" for f in files) or "none"
    note = finished.get("undo_note") or ""
    run_id = str(finished.get("run_id") or "")
    return (
        f'<div style="{_CARD};background:#f6f8fa">'
        f"<div>{status_badge(str(finished.get('status', '')))} <b>{_e(finished.get('message', ''))}</b> "
        f'<span style="color:#6e7781">(stop reason: {_e(finished.get("stop_reason", ""))})</span></div>'
        + ("" if changes else f"<div>Files changed: {file_list}</div>")
        + f"<div>{finished.get('steps', 0)} step(s) · "
        f"{tokens_text(finished.get('total_tokens', 0), finished.get('total_cached_tokens', 0))} · "
        f"${float(finished.get('total_cost_usd', 0.0)):.4f} · "
        f"{float(finished.get('duration_s', 0.0)):.1f} s</div>"
        + (f'<div style="color:#6e7781">{_e(note)}</div>' if note else "")
        + (review_html(run_id, changes, len(files)) if changes else "")
        + "</div>"
    )


def review_html(run_id: str, changes: Sequence[Mapping[str, Any]], files_changed: int = 0) -> str:
    """The review list: each file the run changed with its status, its diff (folded) and the magic that
    reverts it; then the one that reverts them all. The labextension draws the same list with buttons."""
    from architect_nb.execution.confirmation.confirmers import show

    shown_lines = 0
    rows = []
    for change in changes:
        path, status = str(change.get("path")), str(change.get("status", "modified"))
        diff = str(change.get("diff") or "")
        lines = diff.rstrip("\n").count("\n") + 1 if diff.strip() else 0
        revert = f"%architect revert {run_id} {typed_path(path)}"
        head = (
            f"{status_badge(status)} <code>{_e(show(path))}</code> "
            f'<span style="{_NOTE}">revert: <code>{_e(revert)}</code></span>'
        )
        if not diff.strip():
            body = f'<div style="{_NOTE}">No text diff (binary, empty or permissions only).</div>'
        elif shown_lines + lines > _REVIEW_LINES_CAP:
            body = (
                f'<div style="{_NOTE}">Diff not shown here (the review is long): '
                f"<code>%architect review {_e(run_id)}</code> prints it.</div>"
            )
        else:
            shown_lines += lines
            body = (
                f'<details><summary style="cursor:pointer;font-size:12px">diff ({lines} lines)</summary>'
                f"{diff_html(diff, max_lines=_DIFF_LINES_CAP)}</details>"
            )
        rows.append(f'<div style="margin:2px 0">{head}{body}</div>')
    count = max(files_changed, len(changes))
    more = (
        f'<div style="{_NOTE}">{count - len(changes)} more file(s) not listed: '
        f"<code>%architect review {_e(run_id)}</code> lists them all.</div>"
        if count > len(changes)
        else ""
    )
    return (
        f'<div style="margin-top:4px"><b>Review: {count} file(s) changed</b> '
        f'<span style="{_NOTE}">· revert all: <code>%architect undo {_e(run_id)}</code>'
        "</span></div>" + "".join(rows) + more
    )


def _event_html(
    event: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], rewinds: Mapping[str, str]
) -> str:
    kind = event.get("kind")
    if kind == "run_started":
        thread = thread_line(event.get("thread"))
        task = str(event.get("task", "")) or "(carries on from the fork's step)"
        return (
            f'<div style="color:#57606a">architect · {_e(event.get("agent"))} · {_e(event.get("model"))} · '
            f"mode {_e(event.get('mode'))}{' · dry run' if event.get('dry_run') else ''}</div>"
            + (f'<div style="color:#57606a;font-size:12px">{_e(thread)}</div>' if thread else "")
            + f'<div style="margin:4px 0"><b>Task:</b> {_e(task)}</div>'
        )
    if kind == "text_delta" and str(event.get("text", "")).strip():
        return f'<div style="white-space:pre-wrap;margin:4px 0">{_e(event["text"])}</div>'
    if kind == "tool_call":
        result = results.get(str(event.get("call_id")), {})
        return tool_card_html(
            tool=str(event.get("tool")),
            arguments=event.get("arguments") or {},
            status=str(result.get("status", "running")),
            duration_s=result.get("duration_s"),
            output=str(result.get("output") or ""),
            error=result.get("error"),
            diff=result.get("diff"),
            hooks=result.get("hooks") or (),
            images=result.get("images") or (),
            sandboxed=result.get("sandboxed") if isinstance(result.get("sandboxed"), bool) else None,
            changed_files=result.get("changed_files") or (),
        ) + rewinds.get(str(event.get("call_id")), "")
    if kind == "confirmation_answered":
        reason = f": {_e(event.get('reason'))}" if event.get("reason") else ""
        decision = str(event.get("decision"))
        return (
            f'<div style="color:#57606a;font-size:12px">{_e(event.get("tool"))}: '
            f"<b>{_e(_DECISIONS.get(decision, decision))}</b>{reason}</div>"
        )
    if kind == "warning":
        return f'<div style="color:#9a6700">⚠ {_e(event.get("message"))}</div>'
    if kind == "run_finished":
        return summary_html(event)
    return ""


def events_html(events: Sequence[Mapping[str, Any]]) -> str:
    """The run's events (as in the transcript payload) as HTML: text, one card per tool call (a finished
    run's step that changed files ends with the magic that rewinds to before it), summary."""
    results = {str(e.get("call_id")): e for e in events if e.get("kind") == "tool_result"}
    rewinds = {
        call_id: f'<div style="{_NOTE}">Rewind to before step {step}: <code>{_e(magic)}</code></div>'
        for call_id, step, magic in _rewinds(events, results)
    }
    return "".join(_event_html(e, results, rewinds) for e in events)


@dataclass(frozen=True)
class RunOutput:
    """A finished run, as the cell keeps it: the transcript payload (redacted) renders itself."""

    payload: Mapping[str, Any]

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> RunOutput:
        return cls(default_redactor().redact_data(dict(payload)))

    def html(self) -> str:
        body = events_html(self.payload.get("events", []))
        run_id = self.payload.get("run_id", "")
        undo = (
            f'<div style="color:#6e7781;font-size:12px">Run {_e(run_id)} · undo with '
            f"<code>%architect undo {_e(run_id)}</code> · review with "
            f"<code>%architect review {_e(run_id)}</code></div>"
            if _undoable(self.payload)
            else ""
        )
        return f'<div class="architect-nb-run" style="font-size:13px;line-height:1.4">{body}{undo}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        return {
            RUN_MIME_TYPE: dict(self.payload),
            "text/html": self.html(),
            "text/plain": _plain(self.payload),
        }

    def __repr__(self) -> str:
        return _plain(self.payload)


@dataclass(frozen=True)
class MessageOutput:
    """One plain message in the cell (a usage error, a bad config, a missing key), with what to do next."""

    text: str
    level: str = "error"

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        text = default_redactor().redact(self.text)
        colour = "#cf222e" if self.level == "error" else "#57606a"
        data = {
            "text/plain": text,
            "text/html": f'<div style="color:{colour};white-space:pre-wrap">{_e(text)}</div>',
        }
        # The level rides in metadata so a caller (the labextension's undo buttons) can tell success from
        # failure without parsing the text, and no extra MIME type competes for the front end's choice.
        return data, {"architect_nb": {"level": self.level}}

    def __repr__(self) -> str:
        return default_redactor().redact(self.text)
