"""The ACP agent's pure parts: diffs as ACP diff content, answers to permission requests, prompt text."""

from __future__ import annotations

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from architect_nb.acp.agent import _prompt_text
from architect_nb.acp.permissions import (
    answer_of,
    permission_options,
    permission_tool_call,
    question_text,
)
from architect_nb.acp.updates import diff_contents, event_updates, tool_title
from architect_nb.agent.events import TextDelta, ToolCallRequested
from architect_nb.execution.confirmation.confirmers import Approval, ConfirmationRequest
from architect_nb.execution.confirmation.policy import CommandCheck

DIFF = """--- a/shop/cart.py
+++ b/shop/cart.py
@@ -1,3 +1,3 @@
 def total(items):
-    return 1
+    return 2
 # end
@@ -10,2 +10,3 @@
 x = 1
+y = 2
 z = 3
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+hello
"""
SECRET = "ghp_" + "Zq7" * 12


def test_a_unified_diff_becomes_one_diff_entry_per_hunk_with_absolute_paths() -> None:
    first, second, created = diff_contents(DIFF, "/ws")
    assert (first.path, first.old_text, first.new_text) == (
        "/ws/shop/cart.py",
        "def total(items):\n    return 1\n# end",
        "def total(items):\n    return 2\n# end",
    )
    assert (second.old_text, second.new_text) == ("x = 1\nz = 3", "x = 1\ny = 2\nz = 3")
    assert (created.path, created.old_text, created.new_text) == ("/ws/new.txt", None, "hello")


def test_text_that_is_no_diff_gives_no_entries() -> None:
    assert diff_contents("", "/ws") == []
    assert diff_contents("just words\n@@ not a hunk\n", "/ws") == []


def test_answers_map_to_the_engine_and_a_reason_comes_from_meta() -> None:
    def selected(option: str, meta: dict[str, str] | None = None) -> RequestPermissionResponse:
        outcome = AllowedOutcome(option_id=option, outcome="selected")
        outcome.field_meta = meta
        return RequestPermissionResponse(outcome=outcome)

    assert answer_of(selected("approve"))[0].decision == Approval.APPROVE
    assert answer_of(selected("approve_all")) == (answer_of(selected("approve"))[0], True)
    denied, _ = answer_of(selected("deny", {"reason": " use a copy "}))
    assert (denied.decision, denied.reason) == (Approval.DENY, "use a copy")
    cancelled, _ = answer_of(RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled")))
    assert cancelled.decision == Approval.DENY
    unknown, all_like = answer_of(selected("allow-everything-forever"))
    assert unknown.decision == Approval.DENY and not all_like  # never an approval


def test_code_for_the_kernel_is_never_offered_approve_all() -> None:
    code = ConfirmationRequest(
        tool_name="run_python", args={"code": "x = 1"}, sensitivity="sensitive", code="x = 1"
    )
    edit = ConfirmationRequest(tool_name="edit_file", args={"path": "a.py"}, sensitivity="sensitive")
    assert [o.kind for o in permission_options(code)] == ["allow_once", "reject_once"]
    assert [o.kind for o in permission_options(edit)] == ["allow_once", "allow_always", "reject_once"]


def test_code_for_the_kernel_is_in_the_questions_input_as_the_command_editors_show() -> None:
    secret_code = f"token = {SECRET!r}\nprint(len(token))"
    code = ConfirmationRequest(
        tool_name="run_python", args={"code": secret_code}, sensitivity="sensitive", code=secret_code
    )
    raw = permission_tool_call(code, "/ws").raw_input
    assert raw is not None and raw["code"] == raw["command"] and "print(len(token))" in raw["command"]
    assert SECRET not in str(raw)
    edit = ConfirmationRequest(tool_name="edit_file", args={"path": "a.py"}, sensitivity="sensitive")
    assert permission_tool_call(edit, "/ws").raw_input == {"path": "a.py"}
    requested = ToolCallRequested(run_id="r", step=1, call_id="c", tool="run_python", arguments={"code": "1"})
    [start] = event_updates(requested, "/ws")
    assert start.raw_input == {"code": "1", "command": "1"}  # the call as it starts shows it too


def test_the_question_shows_the_command_class_escapes_hidden_characters_and_redacts() -> None:
    command = f"curl -H 'Authorization: {SECRET}' https://x.example\u202e"
    request = ConfirmationRequest(
        tool_name="run_command",
        args={"command": command},
        sensitivity="dangerous",
        command=CommandCheck(command=command, sensitivity="dangerous", reason="network access"),
    )
    text = question_text(request)
    assert "Command classified dangerous: network access" in text
    assert SECRET not in text and "\u202e" not in text and "\\u202e" in text


def test_updates_redact_and_titles_stay_on_one_line() -> None:
    [chunk] = event_updates(TextDelta(run_id="r", step=1, text=f"the token is {SECRET}"), "/ws")
    assert SECRET not in chunk.content.text
    call = ToolCallRequested(
        run_id="r", step=1, call_id="c1", tool="run_command", arguments={"command": "echo a\nrm -rf x\x1b[2K"}
    )
    [start] = event_updates(call, "/ws")
    assert "\n" not in start.title and "\x1b" not in start.title and start.kind == "execute"
    assert tool_title("write_file", {"path": "a" * 500}).endswith("…")


def test_the_prompt_text_takes_text_and_attached_files_and_ignores_the_rest() -> None:
    blocks = [
        TextContentBlock(type="text", text="Fix it."),
        ImageContentBlock(type="image", data="AAAA", mime_type="image/png"),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri="file:///ws/a.py", text="x = 1")
        ),
        ResourceContentBlock(type="resource_link", uri="file:///ws/n.ipynb", name="n.ipynb"),
    ]
    text = _prompt_text(blocks)
    assert text.startswith("Fix it.") and "[Attached: file:///ws/a.py]\nx = 1" in text
    assert "[Attached: file:///ws/n.ipynb]" in text and "AAAA" not in text
    assert _prompt_text([]) == ""
