"""Tool calls and thinking that a local model wrote into its text instead of the API's fields.

Models served by Ollama, vLLM or llama.cpp without a tool-call parser for their template answer with the
call as text. Two forms are recognised:

- Hermes / Qwen 2.5 / Qwen 3: `<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>`
  (`parameters` for `arguments`, and arguments encoded as a JSON string, are read too);
- Qwen3-Coder: `<tool_call><function=read_file><parameter=path>a.py</parameter></function></tool_call>`.

A call cut off before its closing tag (the answer hit the length limit) is still found, with its text as it
stands, so the model is told what went wrong instead of the call being lost. `split_thinking` takes a
`<think>...</think>` prefix (Qwen 3, DeepSeek-R1) out of the text, for a server that leaves it there, and
`LiveText` does both to a streaming answer, so the cell shows thinking as thinking and no call as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LiveText", "TextCall", "find_text_calls", "split_thinking"]

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\s]+)>\s*(.*?)\s*(?:</function>|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?(?:</parameter>|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True)
class TextCall:
    """One call found in the text: its tool name ("" if unreadable), its arguments as JSON text, and why
    they could not be read (None when they could)."""

    name: str
    arguments: str
    problem: str | None = None


def find_text_calls(text: str) -> tuple[str, list[TextCall]]:
    """The text without its `<tool_call>` blocks, and the calls they hold (none: the text unchanged)."""
    if "<tool_call>" not in text and "<function=" not in text:
        return text, []
    calls: list[TextCall] = []
    for match in _BLOCK.finditer(text):
        calls += _calls_in(match.group(1))
    rest = _BLOCK.sub("", text)
    if not calls and "<function=" in text:  # Qwen3-Coder's form without the outer tag
        calls = _calls_in(text)
        rest = _FUNCTION.sub("", text)
    return rest.strip(), calls


def _calls_in(body: str) -> list[TextCall]:
    if body.lstrip().startswith("<function="):
        return [_xml_call(m.group(1), m.group(2)) for m in _FUNCTION.finditer(body)]
    return [_json_call(body)]


def _json_call(body: str) -> TextCall:
    fenced = _FENCE.match(body.strip())
    text = fenced.group(1) if fenced else body.strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        found = _NAME.search(text)
        why = f"the <tool_call> text is not valid JSON ({exc.msg} at character {exc.pos})"
        return TextCall(found.group(1) if found else "", text, why)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return TextCall("", text, 'a <tool_call> must hold {"name": ..., "arguments": {...}}')
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        return TextCall(data["name"], arguments)
    return TextCall(data["name"], json.dumps(arguments, ensure_ascii=False))


def _xml_call(name: str, body: str) -> TextCall:
    arguments: dict[str, object] = {}
    for key, raw in _PARAMETER.findall(body):
        try:
            arguments[key] = json.loads(raw)
        except json.JSONDecodeError:
            arguments[key] = raw  # a plain string, as the form writes one
    return TextCall(name, json.dumps(arguments, ensure_ascii=False))


def split_thinking(text: str) -> tuple[str, str]:
    """(thinking, the rest) of a text that starts with `<think>` or holds a lone `</think>` (the template
    opened the tag); ("", text) otherwise. A `<think>` never closed is all thinking."""
    stripped = text.lstrip()
    if stripped.startswith("<think>"):
        inner = stripped[len("<think>") :]
        thought, closed, rest = inner.partition("</think>")
        return thought.strip(), rest.strip() if closed else ""
    if "</think>" in text and "<think>" not in text:
        thought, _, rest = text.partition("</think>")
        return thought.strip(), rest.strip()
    return "", text


_OPENING = {"<tool_call>": "</tool_call>", "<function=": "</function>"}


class LiveText:
    """Splits an answer's text as it streams: a leading `<think>...</think>` goes to `on_thinking`, and a
    `<tool_call>...</tool_call>` (or Qwen3-Coder's `<function=...>`) is not shown (it appears as a call).
    The end of a piece that may be the start of a tag is held back until the next piece says."""

    def __init__(self, on_text: Callable[[str], None], on_thinking: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.on_thinking = on_thinking
        self.state = "start"  # start, text, think, call
        self.closing = ""  # the tag that ends the current thought or call
        self.held = ""

    def __call__(self, piece: str) -> None:
        self.held += piece
        while self.held:
            if self.state == "start":
                stripped = self.held.lstrip()
                if not stripped or (len(stripped) < len("<think>") and "<think>".startswith(stripped)):
                    return  # not yet known whether the answer starts by thinking
                if stripped.startswith("<think>"):
                    self.held, self.state, self.closing = stripped[len("<think>") :], "think", "</think>"
                else:
                    self.state = "text"
                continue
            tags = tuple(_OPENING) if self.state == "text" else (self.closing,)
            found = [(at, tag) for tag in tags if (at := self.held.find(tag)) >= 0]
            if not found:
                keep = max(
                    (n for tag in tags for n in range(1, len(tag)) if self.held.endswith(tag[:n])), default=0
                )
                self._say(self.held[: len(self.held) - keep])
                self.held = self.held[len(self.held) - keep :]
                return
            at, tag = min(found)
            self._say(self.held[:at])
            self.held = self.held[at + len(tag) :]
            if self.state == "text":
                self.state, self.closing = "call", _OPENING[tag]
            else:
                self.state, self.closing = "text", ""

    def close(self) -> None:
        """The answer is whole: what was held back is said (unless it is part of a call)."""
        if self.state == "start":
            self.state = "text"
        self._say(self.held)
        self.held = ""

    def _say(self, text: str) -> None:
        if text and self.state != "call":
            (self.on_thinking if self.state == "think" else self.on_text)(text)
