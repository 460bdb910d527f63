"""The widget confirmer and the static rendering, without a kernel (the Python twins of the buttons)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from architect_nb.execution.confirmation.confirmers import Approval, ConfirmationAnswer, ConfirmationRequest
from architect_nb.execution.confirmation.policy import CommandCheck
from architect_nb.notebook.output.event_view import call_view
from architect_nb.notebook.output.render import (
    MessageOutput,
    RunOutput,
    diff_html,
    hooks_html,
    tool_card_html,
)
from architect_nb.notebook.questions.approval import BUTTON_LABELS, ApprovalPrompt, WidgetConfirmer, like_key
from architect_nb.notebook.questions.asking import Asking

DIFF = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-total = 0\n+total = 0.0\n"


def _request(**kw: Any) -> ConfirmationRequest:
    base: dict[str, Any] = {"tool_name": "edit_file", "args": {"path": "x.py"}, "sensitivity": "sensitive"}
    return ConfirmationRequest(**{**base, **kw})


class _View:
    def __init__(self) -> None:
        self.shown: list[Any] = []
        self.removed: list[Any] = []


def _confirmer(timeout: float = 5.0, grace: float = 5.0) -> tuple[WidgetConfirmer, _View]:
    view = _View()
    asking = Asking(view.shown.append, view.removed.append, timeout=timeout, grace=grace, front_ends=None)
    return WidgetConfirmer(asking), view


def _ask(confirmer: WidgetConfirmer, request: ConfirmationRequest) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(confirmer.confirm(request)))
    thread.start()
    deadline = time.monotonic() + 5
    while confirmer.pending is None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.005)
    return thread, out


def test_the_buttons_are_labelled_as_the_document_says() -> None:
    prompt = ApprovalPrompt(_request())
    assert [b.description for b in prompt.buttons] == list(BUTTON_LABELS)
    assert BUTTON_LABELS == ("Approve", "Deny", "Abort run", "Approve all like this")


def test_the_question_shows_hidden_characters_the_diff_and_the_verdict() -> None:
    request = _request(
        tool_name="run_command",
        args={"command": "echo \u202eevil\x1b[2J"},
        sensitivity="dev",
        command=CommandCheck(command="echo", sensitivity="dev", reason="a dev tool"),
        preview=DIFF,
    )
    html = ApprovalPrompt(request).question.value
    assert "\u202e" not in html and "\\u202e" in html and "\x1b" not in html
    assert "classified dev: a dev tool" in html
    assert "background:#dafbe1" in html  # the added line of the diff, coloured


@pytest.mark.parametrize(
    ("decision", "reason", "expected"),
    [
        ("approve", "", ConfirmationAnswer.approve()),
        ("deny", "use a test file", ConfirmationAnswer.deny("use a test file")),
        ("abort", "", ConfirmationAnswer.abort("the user pressed Abort run")),
    ],
)
def test_a_click_answers_the_worker_at_once(decision: str, reason: str, expected: ConfirmationAnswer) -> None:
    confirmer, view = _confirmer()
    thread, out = _ask(confirmer, _request())
    assert confirmer.pending is not None and view.shown == [confirmer.pending.box]
    confirmer.pending.reason.value = reason
    started = time.perf_counter()
    confirmer.pending.click(decision)
    thread.join(2)
    assert out == [expected] and time.perf_counter() - started < 0.1
    assert view.removed == view.shown  # the prompt gave way to the decision in the run's log


def test_approve_all_like_this_covers_the_rest_of_the_run_only_for_like_calls() -> None:
    confirmer, view = _confirmer()
    thread, _ = _ask(confirmer, _request())
    assert confirmer.pending is not None
    confirmer.pending.click("approve_all")
    thread.join(2)
    assert confirmer.confirm(_request(args={"path": "y.py"})).decision is Approval.APPROVE
    assert len(view.shown) == 1
    command = _request(
        tool_name="run_command", command=CommandCheck(command="rm -rf x", sensitivity="dangerous")
    )
    thread, out = _ask(confirmer, command)
    assert confirmer.pending is not None  # a different kind of call is asked again
    confirmer.cancel()
    thread.join(2)
    assert out[0].decision is Approval.DENY
    assert like_key(command) == "run_command:rm:dangerous"


def test_nobody_answering_is_a_denial_that_names_the_call_and_says_how_to_run_unattended() -> None:
    confirmer, _ = _confirmer(timeout=0.2)
    answer = confirmer.confirm(_request())
    assert answer.decision is Approval.DENY
    assert answer.reason.startswith("Nobody answered 'Approve edit_file on x.py?' within 0.2 s")
    for hint in ("never approved", "--mode yolo", "--dry-run", "allow rules in .architect.yaml"):
        assert hint in answer.reason


def test_with_no_front_end_an_approval_is_denied_after_the_grace_saying_which_and_why() -> None:
    confirmer, view = _confirmer(timeout=300, grace=0.2)
    started = time.monotonic()
    answer = confirmer.confirm(_request(tool_name="run_python", args={"code": "x = 1"}, code="x = 1"))
    assert time.monotonic() - started < 1.5
    assert answer.decision is Approval.DENY
    assert answer.reason.startswith("No front end that can show buttons is connected (a headless run")
    assert "so 'Approve run_python (code in your kernel)?' was denied" in answer.reason
    assert "--mode yolo" in answer.reason
    assert view.removed == view.shown and len(view.shown) == 1, "the question was shown, then taken away"


def test_a_click_after_the_deadline_changes_nothing() -> None:
    prompt = ApprovalPrompt(_request())
    assert prompt.resolve(ConfirmationAnswer.deny("late")).reason == "late"
    prompt.click("approve")
    assert prompt.answer == ConfirmationAnswer.deny("late")


def test_interrupt_ends_the_wait_within_a_tick() -> None:
    confirmer, _ = _confirmer(timeout=60)
    thread, out = _ask(confirmer, _request())
    started = time.perf_counter()
    confirmer.cancel()
    thread.join(2)
    assert out[0] == ConfirmationAnswer.unanswered("the run was interrupted")
    assert time.perf_counter() - started < 0.2
    assert confirmer.confirm(_request()).decision is Approval.DENY  # and nothing more is asked


def _payload(**finished: Any) -> dict[str, Any]:
    events = [
        {
            "kind": "run_started",
            "run_id": "r1",
            "task": "<b>fix</b>",
            "agent": "build",
            "model": "m",
            "mode": "yolo",
        },
        {"kind": "text_delta", "run_id": "r1", "step": 1, "text": "I'll <script>alert(1)</script> edit."},
        {
            "kind": "tool_call",
            "run_id": "r1",
            "step": 1,
            "call_id": "c1",
            "tool": "edit_file",
            "arguments": {},
        },
        {
            "kind": "tool_result",
            "run_id": "r1",
            "call_id": "c1",
            "tool": "edit_file",
            "status": "ok",
            "output": "",
            "error": None,
            "diff": DIFF,
            "hooks": [{"name": "lint", "exit_code": 1, "output": "\n".join(f"E{i}" for i in range(40))}],
            "duration_s": 0.01,
        },
        {
            "kind": "run_finished",
            "run_id": "r1",
            "status": "success",
            "stop_reason": "completed",
            "message": "Done.",
            "steps": 1,
            "files_changed": ["x.py"],
            "total_tokens": 10,
            "total_cost_usd": 0.0,
            "duration_s": 0.1,
            **finished,
        },
    ]
    return {"version": 1, "run_id": "r1", "events": events}


def test_the_static_bundle_is_escaped_self_contained_and_collapses_long_hook_output() -> None:
    bundle = RunOutput.from_payload(_payload())._repr_mimebundle_()
    assert set(bundle) == {"application/vnd.architect-nb.run+json", "text/html", "text/plain"}
    html = bundle["text/html"]
    assert "<script" not in html and "&lt;script&gt;" in html and "&lt;b&gt;fix" in html
    assert "http" not in html and "<link" not in html and "<style" not in html
    assert "<details><summary" in html and "hook lint" in html and "failed" in html
    assert "background:#dafbe1" in html and "background:#ffebe9" in html
    assert "%architect undo r1" in html and "%architect undo r1" in bundle["text/plain"]
    assert bundle["application/vnd.architect-nb.run+json"] == _payload()


def test_secrets_are_redacted_in_the_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.redaction import default_redactor

    monkeypatch.setenv("SHOP_API_KEY", "hunter2-very-secret")
    default_redactor().refresh()
    try:
        bundle = RunOutput.from_payload(_payload(message="key hunter2-very-secret"))._repr_mimebundle_()
        assert "hunter2-very-secret" not in str(bundle)
        assert "[REDACTED:SHOP_API_KEY]" in bundle["text/html"]
        assert "hunter2" not in str(MessageOutput("bad hunter2-very-secret")._repr_mimebundle_())
    finally:
        monkeypatch.delenv("SHOP_API_KEY")
        default_redactor().refresh()


def test_a_long_diff_is_cut_in_the_run_html_but_whole_in_the_prompt() -> None:
    diff = "--- a/g.py\n+++ b/g.py\n@@ -0,0 +1,5000 @@\n" + "".join(f"+line {i}\n" for i in range(5000))
    card = tool_card_html(call_view(tool="write_file", arguments={"path": "g.py"}, status="ok", diff=diff))
    assert card.count("<span") <= 402 and "+line 396" in card and "+line 397" not in card
    assert "4,603 more lines" in card and "transcript" in card
    payload = _payload()
    payload["events"][3]["diff"] = diff
    bundle = RunOutput.from_payload(payload)._repr_mimebundle_()
    assert len(bundle["text/html"]) < 120_000  # a 5,003-line diff does not go into the saved HTML whole
    assert "+line 4999" in json.dumps(bundle["application/vnd.architect-nb.run+json"])  # the JSON keeps it
    prompt = diff_html(diff, scroll=True)
    assert "+line 4999" in prompt and "max-height" in prompt  # what is approved is shown whole


def test_fragments() -> None:
    assert diff_html("+a\n-b\n").count("<span") == 2
    assert hooks_html([{"name": "fmt", "exit_code": 0}]).count(">ok</span>") == 1
    failed = hooks_html([{"name": "lint", "passed": False, "warning": "exit code 1", "output": "E1"}])
    assert ">failed</span>" in failed and "exit code 1" in failed and "E1" in failed
    card = tool_card_html(
        call_view(tool="run_command", arguments={"command": "ls"}, status="blocked", error="nope")
    )
    assert "blocked" in card and "nope" in card


def test_a_command_card_says_whether_it_ran_sandboxed() -> None:
    boxed = tool_card_html(
        call_view(tool="run_command", arguments={"command": "pytest"}, status="ok", sandboxed=True)
    )
    plain = tool_card_html(
        call_view(tool="run_command", arguments={"command": "pytest"}, status="ok", sandboxed=False)
    )
    other = tool_card_html(call_view(tool="read_file", arguments={"path": "a"}, status="ok"))
    assert ">sandboxed</span>" in boxed and ">not sandboxed</span>" in plain
    assert "sandboxed" not in other
    payload = _payload()
    payload["events"][2:4] = [
        {**payload["events"][2], "tool": "run_command", "arguments": {"command": "pytest"}},
        {**payload["events"][3], "tool": "run_command", "diff": None, "hooks": [], "sandboxed": True},
    ]
    bundle = RunOutput.from_payload(payload)._repr_mimebundle_()
    assert ">sandboxed</span>" in bundle["text/html"]
    assert "- run_command: ok 0.01 s (sandboxed)" in bundle["text/plain"]


def test_a_transcript_without_a_review_list_names_its_files_and_says_its_undo_note() -> None:
    """No `changes` (a run whose kernel kept no review list): the file names instead, and `undo_note` only."""
    note = "Undo does not cover files over the size limit (big.bin)."
    older = "Files changed by run_command are not tracked by undo."  # the unreleased key, no longer read
    payload = _payload(undo_note=note, untracked_changes_note=older)
    bundle = RunOutput.from_payload(payload)._repr_mimebundle_()
    html = bundle["text/html"]
    assert note in html and note in bundle["text/plain"]
    assert older not in html and older not in bundle["text/plain"]
    assert "Files changed: <code>x.py</code>" in html and "Review:" not in html
    assert "Rewind to before step" not in html  # its tool results say nothing of what they changed


def test_the_review_lists_every_file_and_caps_its_diffs_in_the_html() -> None:
    diff = "--- a/f.py\n+++ b/f.py\n@@ -1,100 +1,100 @@\n" + "".join(f"-a{i}\n+b{i}\n" for i in range(100))
    changes = [{"path": f"gen/f{i}.py", "status": "modified", "diff": diff} for i in range(30)]
    files = [c["path"] for c in changes] + ["gen/unlisted.py"]
    payload = _payload(
        changes=changes,
        files_changed=files,
        undo_note="Undo does not cover files over the size limit (big.bin).",
    )
    payload["events"][3]["changed_files"] = ["x.py"]
    bundle = RunOutput.from_payload(payload)._repr_mimebundle_()
    html = bundle["text/html"]
    assert "Review: 31 file(s) changed" in html and "Files changed:" not in html
    assert html.count("%architect revert r1 gen/f") == 30
    shown = html.count('<summary style="cursor:pointer;font-size:12px">diff (203 lines)</summary>')
    assert shown == 2000 // 203  # then files are listed without their diff
    assert html.count("<code>%architect review r1</code> prints it") == 30 - shown
    assert "1 more file(s) not listed" in html and "over the size limit (big.bin)" in html
    assert len(html) < 400_000
    # Each step that changed files ends with its rewind, once the run has finished.
    assert html.count("Rewind to before step 1: <code>%architect undo r1:1</code>") == 1
    assert "Changed: <code>x.py</code>" in html
    plain = bundle["text/plain"]
    assert (
        "- edit_file: ok 0.01 s\n  Changed: x.py\n  Rewind to before step 1: %architect undo r1:1\n" in plain
    )
    assert "Review: 31 file(s) changed · revert all: %architect undo r1" in plain
    assert "  modified gen/f7.py · revert: %architect revert r1 gen/f7.py" in plain
    assert "  1 more file(s) not listed: %architect review r1 lists them all." in plain
    running = {**payload, "events": payload["events"][:-1]}
    assert "Rewind to before" not in RunOutput.from_payload(running).html()


@pytest.mark.parametrize(
    ("path", "typed"),
    [
        ("shop/cart.py", "shop/cart.py"),
        ("my file.py", "'my file.py'"),
        ("it's.py", "'it'\"'\"'s.py'"),
        ("two\nlines", "b64:dHdvCmxpbmVz"),
        (
            "evil\u202etxt.py",
            "b64:ZXZpbOKArnR4dC5weQ",
        ),  # a bidi override is not typed where it cannot be seen
        ("zero\u200bwidth", "b64:emVyb-KAi3dpZHRo"),
    ],
)
def test_typed_paths_are_what_the_revert_magic_reads_back(path: str, typed: str) -> None:
    import shlex

    from architect_nb.notebook.output.render import typed_path
    from architect_nb.notebook.state import _path_argument

    assert typed_path(path) == typed
    assert _path_argument(shlex.split(f"revert r1 {typed}")[2]) == path


def test_the_approval_diff_and_the_saved_record_show_hidden_characters() -> None:
    """A diff can hide or reorder what it does with bidi overrides, ANSI escapes and zero-width characters:
    the prompt and the run's saved HTML show them as escapes, as they show arguments."""
    sneaky = (
        '--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-ok = True\n+ok = "\u202eeurT"\u200b  # \x1b[8mhidden\x1b[0m\n'
    )
    prompt = ApprovalPrompt(_request(preview=sneaky)).question.value
    saved = diff_html(sneaky)
    for html in (prompt, saved):
        assert "\u202e" not in html and "\u200b" not in html and "\x1b" not in html
        assert "\\u202e" in html and "\\u200b" in html and "\\x1b[8mhidden" in html
