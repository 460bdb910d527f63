"""The static output of a run: `_repr_mimebundle_` with the transcript JSON, HTML and plain text.

The words come from `event_view`, which decides what is said about each event; this module lays them out as
HTML, and `text_render` as plain text. The HTML uses inline styles only (no script, no stylesheet, no network
resource), so a saved notebook reads the same on GitHub, in nbviewer, VS Code and nbconvert. Everything
passes the secret redactor and is escaped. The same fragments (`tool_card_html`, `diff_html`, ...) draw the
live view, so live and saved look alike.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from architect_nb.agent.events import RUN_MIME_TYPE
from architect_nb.notebook.output.event_view import (
    TODO_MARKS,
    CallView,
    Code,
    Decision,
    Header,
    Hook,
    ModelCall,
    RunView,
    Said,
    Summary,
    Thought,
    Todo,
    View,
    WarningView,
    Words,
    hook_view,
    run_view,
    summary_view,
    tokens_text,
    typed_path,
)
from architect_nb.notebook.output.text_render import run_text
from architect_nb.redaction import default_redactor

__all__ = [
    "MessageOutput",
    "RunOutput",
    "diff_html",
    "events_html",
    "hooks_html",
    "review_html",
    "run_html",
    "status_badge",
    "summary_html",
    "tokens_text",
    "tool_card_html",
    "typed_path",
    "view_html",
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
    "skipped": "#6e7781",
    "needs_person": "#bc4c00",
    "invalid": "#cf222e",
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


def _words_html(words: Words) -> str:
    """Words from the view, escaped, with their `Code` pieces in `<code>`."""
    return "".join(f"<code>{_e(w)}</code>" if isinstance(w, Code) else _e(w) for w in words)


def hooks_html(hooks: Sequence[Mapping[str, Any]]) -> str:
    """Hook results (as the engine or a hook runner reports them): pass or fail; long output collapsed."""
    return _hooks_html([hook_view(hook) for hook in hooks])


def _hooks_html(hooks: Sequence[Hook]) -> str:
    parts = []
    for hook in hooks:
        warning = f' <span style="color:#9a6700">{_e(hook.warning)}</span>' if hook.warning else ""
        parts.append(
            f"<div>hook {_e(hook.name)} {status_badge(hook.status)}{warning}</div>"
            + _text_block(f"hook {hook.name}", hook.output)
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


def tool_card_html(call: CallView) -> str:
    """One tool call: tool, arguments (code highlighted), status, duration and, for a command, whether it ran
    in the OS sandbox; then the files it changed, the diff, hook results, output, the images it made and,
    for a finished run's step that changed files, the magic that rewinds to before it."""
    from architect_nb.execution.confirmation.confirmers import show_block

    took = f' <span style="color:#6e7781">{_e(call.took)}</span>' if call.took else ""
    sandbox = ""
    if call.sandbox:
        colour = "#1a7f37" if call.sandboxed else "#9a6700"
        sandbox = f' <span style="color:{colour};font-size:11px">{_e(call.sandbox)}</span>'
    head = f'<div><b style="{_MONO}">{_e(call.tool)}</b> {status_badge(call.status)}{took}{sandbox}</div>'
    shown = _args_text(call.arguments)
    args = f'<pre style="{_PRE};color:#57606a">{_e(shown)}</pre>' if shown else ""
    if call.raw_arguments is not None:  # what the model sent, which could not be read
        args += f'<div style="{_NOTE}">The arguments as the model sent them:</div>' + (
            _text_block("arguments", call.raw_arguments) or f'<div style="{_NOTE}">(nothing)</div>'
        )
    code = call.arguments.get("code")
    if isinstance(code, str):
        args += code_html(show_block(code), max_height=240)
    body = "".join(
        f'<div style="color:#57606a;font-size:12px">{_words_html(words)}</div>'
        for words in (call.changed, call.variables)
        if words
    )
    body += diff_html(call.diff, max_lines=_DIFF_LINES_CAP) if call.diff else ""
    body += _hooks_html(call.hooks)
    if call.error and call.status in ("blocked", "denied", "aborted", "skipped", "needs_person", "invalid"):
        body += f'<div style="color:{_STATUS_COLOURS.get(call.status, "#cf222e")}">{_e(call.error)}</div>'
    elif call.error:
        body += _text_block("error", call.error)
    if call.output and not call.diff:
        body += _text_block("output", call.output)
    body += "".join(image_html(image) for image in call.images)
    rewind = f'<div style="{_NOTE}">{_words_html(call.rewind)}</div>' if call.rewind else ""
    return f'<div style="{_CARD}">{head}{args}{body}</div>{rewind}'


def todo_html(todo: Todo) -> str:
    """The checklist: done items struck through, the one in progress in bold."""
    rows = []
    for status, text in todo.items:
        styled = (
            f"<s>{_e(text)}</s>"
            if status == "done"
            else f"<b>{_e(text)}</b>"
            if status == "in_progress"
            else _e(text)
        )
        rows.append(f'<li style="list-style:none">{TODO_MARKS.get(status, "☐")} {styled}</li>')
    return (
        f'<div class="architect-nb-todo" style="{_CARD}"><div style="{_NOTE}">{_e(todo.title)}</div>'
        f'<ul style="margin:2px 0;padding-left:4px">{"".join(rows)}</ul></div>'
    )


def summary_html(finished: Mapping[str, Any] | Summary) -> str:
    """The final summary: status, stop reason, tokens, cost and time, what undo does not cover, and the review
    list (or, without one, the names of the files changed)."""
    summary = finished if isinstance(finished, Summary) else summary_view(finished)
    return (
        f'<div style="{_CARD};background:#f6f8fa">'
        f"<div>{status_badge(summary.status)} <b>{_e(summary.message)}</b> "
        f'<span style="color:#6e7781">{_e(summary.stop)}</span></div>'
        + (f"<div>{_words_html(summary.files)}</div>" if summary.files else "")
        + (f"<div>{_e(summary.todo)}</div>" if summary.todo else "")
        + f"<div>{_e(summary.cost)}</div>"
        + (f'<div style="color:#6e7781">{_e(summary.note)}</div>' if summary.note else "")
        + (review_html(summary) if summary.changes else "")
        + "</div>"
    )


def review_html(summary: Summary) -> str:
    """The review list: each file the run changed with its status, its diff (folded) and the magic that
    reverts it; then the one that reverts them all. The labextension draws the same list with buttons."""
    shown_lines = 0
    rows = []
    for change in summary.changes:
        lines = change.diff.rstrip("\n").count("\n") + 1 if change.diff.strip() else 0
        head = (
            f"{status_badge(change.status)} <code>{_e(change.path)}</code> "
            f'<span style="{_NOTE}">{_words_html(change.revert)}</span>'
        )
        if not change.diff.strip():
            body = f'<div style="{_NOTE}">{_e(summary.no_text_diff)}</div>'
        elif shown_lines + lines > _REVIEW_LINES_CAP:
            body = f'<div style="{_NOTE}">{_words_html(summary.diff_elsewhere)}</div>'
        else:
            shown_lines += lines
            body = (
                f'<details><summary style="cursor:pointer;font-size:12px">diff ({lines} lines)</summary>'
                f"{diff_html(change.diff, max_lines=_DIFF_LINES_CAP)}</details>"
            )
        rows.append(f'<div style="margin:2px 0">{head}{body}</div>')
    more = f'<div style="{_NOTE}">{_words_html(summary.more_files)}</div>' if summary.more_files else ""
    return (
        f'<div style="margin-top:4px"><b>{_e(summary.review_title)}</b> '
        f'<span style="{_NOTE}">· {_words_html(summary.revert_all)}</span></div>' + "".join(rows) + more
    )


def view_html(view: View) -> str:
    """One view of `event_view` as HTML."""
    if isinstance(view, Header):
        return (
            f'<div style="color:#57606a">{_e(view.title)}</div>'
            + (f'<div style="color:#57606a;font-size:12px">{_e(view.thread)}</div>' if view.thread else "")
            + (
                f'<div style="color:#57606a;font-size:12px">{_e(view.instructions)}</div>'
                if view.instructions
                else ""
            )
            + f'<div style="margin:4px 0"><b>{_e(view.task_label)}:</b> {_e(view.task)}</div>'
        )
    if isinstance(view, Todo):
        return todo_html(view)
    if isinstance(view, Thought):  # folded: GitHub, nbviewer and VS Code keep <details> closed
        summary = f'<summary style="cursor:pointer;{_NOTE}">{_e(view.title)}</summary>'
        return (
            f'<details style="margin:4px 0">{summary}'
            f'<div style="white-space:pre-wrap;{_NOTE};border-left:3px solid #d0d7de;padding-left:8px">'
            f"{_e(_visible(view.text))}</div></details>"
        )
    if isinstance(view, Said):
        return f'<div style="white-space:pre-wrap;margin:4px 0">{_e(view.text)}</div>'
    if isinstance(view, CallView):
        return tool_card_html(view)
    if isinstance(view, Decision):
        reason = f": {_e(view.reason)}" if view.reason else ""
        answer = f"{_e(view.tool)}: <b>{_e(view.decision)}</b>{reason}"
        return f'<div style="color:#57606a;font-size:12px">{answer}</div>'
    if isinstance(view, WarningView):
        return f'<div style="color:#9a6700">{_e(view.mark)} {_e(view.message)}</div>'
    if isinstance(view, ModelCall):
        lines = [view.meter, view.compressed]
        body = "".join(f"<div>{_e(line)}</div>" for line in lines if line)
        if view.inspect:
            body += f"<div>{_words_html(view.inspect)}</div>"
        return (
            f'<details class="architect-nb-model-call" style="margin:4px 0;{_NOTE}">'
            f'<summary style="cursor:pointer">{_e(view.title)}</summary>{body}</details>'
        )
    return summary_html(view)


def events_html(events: Sequence[Mapping[str, Any]]) -> str:
    """The run's events (as in the transcript payload) as HTML: text, one card per tool call, summary."""
    return "".join(view_html(view) for view in run_view(events).parts)


def run_html(view: RunView) -> str:
    """A run's whole HTML: its events, then how to undo and review it."""
    body = "".join(view_html(part) for part in view.parts)
    footer = (
        f'<div style="color:#6e7781;font-size:12px">{_words_html(view.footer)}</div>' if view.footer else ""
    )
    return f'<div class="architect-nb-run" style="font-size:13px;line-height:1.4">{body}{footer}</div>'


@dataclass(frozen=True)
class RunOutput:
    """A finished run, as the cell keeps it: the transcript payload (redacted) renders itself."""

    payload: Mapping[str, Any]

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> RunOutput:
        return cls(default_redactor().redact_data(dict(payload)))

    def view(self) -> RunView:
        return run_view(self.payload.get("events", []), str(self.payload.get("run_id") or ""))

    def html(self) -> str:
        return run_html(self.view())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        view = self.view()
        return {RUN_MIME_TYPE: dict(self.payload), "text/html": run_html(view), "text/plain": run_text(view)}

    def __repr__(self) -> str:
        return run_text(self.view())


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
