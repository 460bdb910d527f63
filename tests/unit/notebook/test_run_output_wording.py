"""The saved HTML and the plain text of a run say the same words, because both lay out one view per event.

Three checks, each able to fail on its own: every word of each view appears in both renderings of it; a
sentinel put in any field of a view comes out of both renderers (so neither writes a label of its own); and
the wording picked for each event kind, pinned, in both.
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

import pytest

from architect_nb.notebook.output.event_view import ChangeView, Code, RunView, Summary, View, Words, run_view
from architect_nb.notebook.output.render import RunOutput, events_html, run_html, view_html
from architect_nb.notebook.output.text_render import run_text, view_lines

RUN = "r9"


def _events(*, finished: bool = True) -> list[dict[str, Any]]:
    """A run with every kind of event the output shows."""
    thread = {
        "name": "what-if",
        "forked_from": "step 1 of run r8",
        "runs": 1,
        "turns": 2,
        "context_tokens": 300,
    }
    events: list[dict[str, Any]] = [
        {"kind": "run_started", "run_id": RUN, "task": "", "agent": "build", "model": "m"}
        | {"mode": "confirm-sensitive", "dry_run": True, "thread": thread},
        {"kind": "thinking_delta", "run_id": RUN, "step": 1, "text": "a.py needs black, then a test."},
        {"kind": "text_delta", "run_id": RUN, "step": 1, "text": "I'll fix a.py.\n"},
        {"kind": "tool_call", "run_id": RUN, "step": 1, "call_id": "c1", "tool": "run_command"}
        | {"arguments": {"command": "black a.py"}},
        {"kind": "confirmation_answered", "run_id": RUN, "call_id": "c1", "tool": "run_command"}
        | {"decision": "approve", "reason": ""},
        {"kind": "tool_result", "run_id": RUN, "call_id": "c1", "tool": "run_command", "status": "ok"}
        | {"output": "reformatted a.py", "duration_s": 0.25, "sandboxed": True, "changed_files": ["a.py"]},
        {"kind": "tool_call", "run_id": RUN, "step": 2, "call_id": "c2", "tool": "edit_file"}
        | {"arguments": {"path": "pyproject.toml"}},
        {"kind": "confirmation_answered", "run_id": RUN, "call_id": "c2", "tool": "edit_file"}
        | {"decision": "deny", "reason": "leave the version alone"},
        {"kind": "tool_result", "run_id": RUN, "call_id": "c2", "tool": "edit_file", "status": "denied"}
        | {"error": "denied by the user", "duration_s": 1.5},
        {"kind": "warning", "run_id": RUN, "message": "the context is nearly full"},
        {"kind": "tool_call", "run_id": RUN, "step": 3, "call_id": "c3", "tool": "read_file"}
        | {"arguments": {"path": "b.py"}},
    ]
    if finished:
        changes = [
            {
                "path": "a.py",
                "status": "modified",
                "diff": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x=1\n+x = 1\n",
            },
            {"path": "two\nlines.txt", "status": "added", "diff": ""},
        ]
        events.append(
            {"kind": "run_finished", "run_id": RUN, "status": "partial", "stop_reason": "max_steps"}
            | {"message": "Stopped after 3 steps.", "steps": 3, "total_tokens": 12_400}
            | {"total_cached_tokens": 9_800, "total_reasoning_tokens": 1_200}
            | {"total_cost_usd": 0.0123, "duration_s": 4.25}
            | {"files_changed": ["a.py", "two\nlines.txt", "c.py"], "changes": changes}
            | {"undo_note": "Undo does not cover files over the size limit (big.bin)."}
        )
    return events


def _view() -> RunView:
    return run_view(_events(), RUN)


def _visible(markup: str) -> str:
    """What a reader sees of the HTML: its text, tags dropped and entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def _said(value: object) -> list[str]:
    """The words a field's value says: a string, `Words` joined, or each said field of a file change."""
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return _said("".join(value))
    if isinstance(value, tuple) and all(isinstance(v, ChangeView) for v in value):
        return [word for change in value for word in _fields_said(change)]
    raise AssertionError(f"a said field of an unexpected type: {value!r}")


def _fields_said(view: object) -> list[str]:
    fields = dataclasses.fields(view)  # type: ignore[arg-type]
    return [w for f in fields if not f.metadata.get("html_only") for w in _said(getattr(view, f.name))]


def test_the_view_has_each_kind_of_event() -> None:
    kinds = [type(part).__name__ for part in _view().parts]
    assert kinds == [
        "Header",
        "Thought",
        "Said",
        "CallView",
        "Decision",
        "CallView",
        "Decision",
        "WarningView",
        "CallView",
        "Summary",
    ]
    assert _view().footer


@pytest.mark.parametrize("index", range(10))
def test_both_renderers_say_every_word_of_each_view(index: int) -> None:
    part = _view().parts[index]
    shown, text = _visible(view_html(part)), "\n".join(view_lines(part))
    words = _fields_said(part)
    assert words  # a view that says nothing would pass vacuously
    for word in words:
        assert word in shown, f"the HTML of {type(part).__name__} does not say {word!r}"
        assert word in text, f"the text of {type(part).__name__} does not say {word!r}"


def _with_sentinels(view: Any, tag: str) -> tuple[Any, list[str], list[str]]:
    """The view with each said field replaced by a sentinel; the sentinels, and those that are `Code`."""
    changes: dict[str, object] = {}
    said: list[str] = []
    code: list[str] = []
    for f in dataclasses.fields(view):
        value = getattr(view, f.name)
        name = f"«{tag}.{f.name}»"
        if f.metadata.get("html_only"):
            continue
        if isinstance(value, str):
            changes[f.name] = name
            said.append(name)
        elif isinstance(value, tuple) and all(isinstance(v, ChangeView) for v in value) and value:
            replaced = [_with_sentinels(change, f"{tag}.{f.name}{i}") for i, change in enumerate(value)]
            changes[f.name] = tuple(r[0] for r in replaced)
            said += [s for r in replaced for s in r[1]]
            code += [c for r in replaced for c in r[2]]
        elif isinstance(value, tuple):
            words: Words = (f"{name} ", Code(f"{name}-code"))
            changes[f.name] = words
            said += [f"{name} {name}-code"]
            code.append(f"{name}-code")
    return dataclasses.replace(view, **changes), said, code


@pytest.mark.parametrize("index", range(10))
def test_every_said_field_reaches_both_renderers_from_the_view(index: int) -> None:
    """A renderer that wrote a word of its own (a label, a status) instead of the view's would drop its
    sentinel: the wording cannot drift in one renderer only."""
    part: View = _view().parts[index]
    changed, sentinels, code = _with_sentinels(part, type(part).__name__)
    assert sentinels
    markup, text = view_html(changed), "\n".join(view_lines(changed))
    for sentinel in sentinels:
        assert sentinel in _visible(markup), f"the HTML does not take {sentinel} from the view"
        assert sentinel in text, f"the text does not take {sentinel} from the view"
    for piece in code:
        assert f"<code>{html.escape(piece)}</code>" in markup  # typed text is set as code in the HTML


def test_the_footer_comes_from_the_view_in_both() -> None:
    view = dataclasses.replace(_view(), footer=("«footer» ", Code("«magic»")))
    assert "«footer» <code>«magic»</code>" in run_html(view)
    assert run_text(view).endswith("«footer» «magic»")


#: The wording of each event kind, as both renderers now say it.
PINNED = [
    "architect run r9 · build · m · mode confirm-sensitive · dry run",
    "forked from step 1 of run r8 into thread `what-if` · 1 earlier run, 2 turns, ~300 tokens of context",
    "Task: (carries on from the fork's step)",
    "Thinking (6 words)",
    "I'll fix a.py.",
    "run_command",
    "0.25 s",
    "sandboxed",
    "Changed: a.py",
    "Rewind to before step 1: %architect undo r9:1",
    "run_command: approved",
    "edit_file: denied: leave the version alone",
    "⚠ the context is nearly full",
    "not run",  # a call with no result in a finished run
    "(stop reason: max_steps)",
    "3 step(s) · 12,400 tokens, 9,800 cached, 1,200 thinking · $0.0123 · 4.2 s",
    "Undo does not cover files over the size limit (big.bin).",
    "Review: 3 file(s) changed",
    "revert all: %architect undo r9",
    "revert: %architect revert r9 a.py",
    "revert: %architect revert r9 b64:dHdvCmxpbmVzLnR4dA",
    "two\\x0alines.txt",  # a path's hidden characters shown as escapes, in the review as in the text
    "1 more file(s) not listed: %architect review r9 lists them all.",
    "Run r9 · undo with %architect undo r9 · review with %architect review r9",
]


@pytest.mark.parametrize("words", PINNED)
def test_the_saved_html_and_text_say_the_chosen_wording(words: str) -> None:
    bundle = RunOutput.from_payload({"version": 1, "run_id": RUN, "events": _events()})._repr_mimebundle_()
    assert words in _visible(bundle["text/html"])
    assert words in bundle["text/plain"]


def test_the_plain_text_lays_the_words_out_one_line_each() -> None:
    text = run_text(_view())
    assert text.splitlines()[3:11] == [
        "Thinking (6 words)",
        "I'll fix a.py.",
        "- run_command: ok 0.25 s (sandboxed)",
        "  Changed: a.py",
        "  Rewind to before step 1: %architect undo r9:1",
        "  run_command: approved",
        "- edit_file: denied 1.50 s",
        "  edit_file: denied: leave the version alone",
    ]
    assert "partial: Stopped after 3 steps. (stop reason: max_steps)\n" in text
    assert "Review: 3 file(s) changed · revert all: %architect undo r9\n  modified a.py · revert: " in text
    assert "Files changed:" not in text  # the review list names them


def test_a_call_still_going_is_running_and_a_finished_run_without_its_result_did_not_run() -> None:
    live = _visible(events_html(_events(finished=False)))
    assert "read_file running" in live and "not run" not in live
    assert "Rewind to before" not in live  # a run still going cannot be rewound
    finished = _view().parts[8]
    assert _visible(view_html(finished)).startswith("read_file not run")
    assert view_lines(finished) == ["- read_file: not run"]


def test_without_a_review_list_both_name_the_files_changed_with_hidden_characters_shown() -> None:
    finished = {**_events()[-1], "changes": []}
    summary = run_view([finished], RUN).parts[0]
    assert isinstance(summary, Summary)
    line = "Files changed: a.py, two\\x0alines.txt, c.py"
    assert line in _visible(view_html(summary)) and line in view_lines(summary)
    assert "<code>two\\x0alines.txt</code>" in view_html(summary)
    nothing = run_view([{**finished, "files_changed": []}], RUN).parts[0]
    assert "Files changed: none" in view_lines(nothing)
    assert "Files changed: none" in _visible(view_html(nothing))
