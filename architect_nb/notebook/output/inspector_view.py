"""The inspector: one step's request (the messages marked new since the previous request, the tool schemas),
the model's raw reply and its usage, drawn as HTML.

`%architect inspect RUN:STEP` shows it for a run of this kernel (`InspectorOutput`, with the JSON under
`INSPECT_MIME_TYPE` for the labextension); the step-through prompt shows it for the step it pauses at. The
data comes from the run's transcript (`agent.conversation.inspector.rebuild`) and is redacted before it is
drawn.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from architect_nb.notebook.output.event_view import meter_text
from architect_nb.redaction import default_redactor

__all__ = ["INSPECT_MIME_TYPE", "InspectorOutput", "inspector_html"]

INSPECT_MIME_TYPE = "application/vnd.architect-nb.inspect+json"
_SHOWN = 20_000  # characters of one message drawn; the JSON keeps it whole
_PRE = (
    "margin:2px 0;padding:4px 6px;white-space:pre-wrap;word-break:break-word;background:#f6f8fa;"
    "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px"
)
_NEW = "border-left:3px solid #1a7f37;padding-left:6px"
_OLD = "border-left:3px solid #d0d7de;padding-left:6px"


def _e(text: object) -> str:
    from architect_nb.execution.confirmation.confirmers import show_block

    return html.escape(show_block(str(text)), quote=True)


def _pre(text: str) -> str:
    if len(text) > _SHOWN:
        text = text[:_SHOWN] + f"\n[... {len(text) - _SHOWN:,} more characters in the transcript]"
    return f'<pre style="{_PRE}">{_e(text)}</pre>'


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # text and image parts
        return "\n".join(
            "[image]" if part.get("type") == "image_url" else str(part.get("text", ""))
            for part in content
            if isinstance(part, dict)
        )
    return "" if content is None else str(content)


def _message_html(index: int, message: Mapping[str, Any], new: bool) -> str:
    role = str(message.get("role", "?"))
    badge = ' <b style="color:#1a7f37">new</b>' if new else ""
    extra = f" · {message['tool_call_id']}" if message.get("tool_call_id") else ""
    parts = [f"<div><b>{index}. {_e(role)}</b>{_e(extra)}{badge}</div>"]
    if text := _content(message):
        parts.append(_pre(text))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        parts.append(_pre(f"→ {function.get('name')}({function.get('arguments')})  [{call.get('id')}]"))
    if "missing" in message:
        parts.append("<div><i>not in this transcript</i></div>")
    style = f"margin:4px 0;{_NEW if new else _OLD}"
    return f'<div class="architect-nb-message" style="{style}">{"".join(parts)}</div>'


def _reply_html(reply: Mapping[str, Any] | None) -> str:
    if not reply:
        return "<div><i>No reply recorded (the call failed or the run stopped before it).</i></div>"
    parts = []
    if reply.get("thinking"):
        parts.append("<div><b>thinking</b></div>" + _pre(str(reply["thinking"])))
    if reply.get("content"):
        parts.append("<div><b>text</b></div>" + _pre(str(reply["content"])))
    for call in reply.get("tool_calls") or []:
        parts.append(
            f"<div><b>call</b> {_e(call.get('name'))} [{_e(call.get('id'))}], its arguments as written:</div>"
            + _pre(str(call.get("arguments")))
        )
    usage = reply.get("usage") or {}
    if usage:
        cost = f"${float(usage.get('cost_usd') or 0):.4f}" if usage.get("priced") else "not priced"
        parts.append(
            f"<div>usage: {int(usage.get('input_tokens') or 0):,} input "
            f"({int(usage.get('cached_tokens') or 0):,} cached) · {int(usage.get('output_tokens') or 0):,} "
            f"output · {cost} · finish: {_e(reply.get('finish_reason') or '')}</div>"
        )
    return "".join(parts)


def inspector_html(data: Mapping[str, Any]) -> str:
    """The request and reply of one step (as `rebuild` gives them), already redacted."""
    messages = data.get("messages") or []
    new = set(data.get("new") or ())
    tools = data.get("tools") or []
    meter = data.get("meter") or {}
    names = ", ".join(str((t.get("function") or {}).get("name")) for t in tools)
    body = [
        f"<div><b>Step {_e(data.get('step'))}: what the model was sent</b> "
        f"({len(messages)} messages, {len(new)} new since the previous request, marked green)</div>",
    ]
    if line := meter_text(meter):
        body.append(f"<div style='color:#57606a'>{_e(line)}</div>")
    if meter.get("compressed"):
        body.append(f"<div style='color:#9a6700'>{_e(meter['compressed'])}</div>")
    body += [_message_html(i, m, i in new) for i, m in enumerate(messages)]
    body.append(
        f'<details><summary style="cursor:pointer">Tool schemas ({len(tools)}): {_e(names)}</summary>'
        f"{_pre(json.dumps(tools, indent=1, ensure_ascii=False))}</details>"
    )
    raw = json.dumps({"messages": messages, "tools": tools}, indent=1, ensure_ascii=False)
    body.append(  # whole: what a teacher compares with what a provider's log shows
        '<details class="architect-nb-request-json"><summary style="cursor:pointer">The request as JSON'
        f'</summary><pre style="{_PRE}">{html.escape(raw, quote=True)}</pre></details>'
    )
    body.append("<div style='margin-top:6px'><b>What the model answered (raw)</b></div>")
    body.append(_reply_html(data.get("reply")))
    return (
        '<div class="architect-nb-inspector" style="font-size:13px;line-height:1.4;border:1px solid #d0d7de;'
        f'border-radius:6px;padding:6px 8px">{"".join(body)}</div>'
    )


class InspectorOutput:
    """`%architect inspect RUN:STEP`: the JSON (for the labextension), the HTML, and a line of text."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = default_redactor().redact_data(dict(data))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        messages = self.data.get("messages") or []
        return {
            INSPECT_MIME_TYPE: self.data,
            "text/html": inspector_html(self.data),
            "text/plain": f"Step {self.data.get('step')}: the model was sent {len(messages)} messages "
            f"({len(self.data.get('new') or ())} new); the HTML and the JSON show them.",
        }
