"""The model's thinking in the cell: one folded view per step, in the HTML twin and the plain text, redacted;
the scripted model can think too (demos and teaching show it), streamed or not, and a recording keeps it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from architect_nb.notebook.output.render import RunOutput
from architect_nb.redaction import default_redactor
from tests.support.agent import make_loop, write_script
from tests.support.provider_matrix import project

TURNS = [
    {
        "thinking": "The cart's total starts from an int; read it before changing anything.",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}],
    },
    {"thinking": "Seen it: one line to change.", "content": "It starts from 0; I would make it 0.0."},
]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_a_scripted_run_thinks_and_the_cell_shows_it_folded(stream: bool, tmp_path: Path) -> None:
    root = project(tmp_path)
    model = write_script(root, TURNS)
    recorded = tmp_path / "recorded.yaml"
    loop = make_loop(root, model, overrides={"llm.stream": stream}, record_to=recorded)
    result = loop.run("How does the total start?")
    assert result.stop_reason == "completed", result.message
    assert result.final_text == "It starts from 0; I would make it 0.0."
    events = loop.transcript.to_list()
    assert [e["text"] for e in events if e["kind"] == "thinking_delta"] == [t["thinking"] for t in TURNS]
    assert all("<think>" not in e["text"] for e in events if e["kind"] == "text_delta")
    said = [m for m in result.messages if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in said] == [t["thinking"] for t in TURNS]

    output = RunOutput.from_payload(loop.transcript.to_payload())
    html = output.html()
    folds = re.findall(r"<details[^>]*>(<summary[^>]*>Thinking \((\d+) words\)</summary>)", html)
    assert [int(words) for _, words in folds] == [12, 6]
    assert "<details open" not in html  # folded until a person opens it
    assert "read it before changing anything." in html
    text = repr(output)
    assert "Thinking (12 words)" in text and "read it before changing anything" not in text  # named, not said
    assert html.index("Thinking (12 words)") < html.index("read_file")  # it comes before what it led to

    replay = yaml.safe_load(recorded.read_text())
    assert [t.get("thinking") for t in replay["runs"][0]["turns"]] == [t["thinking"] for t in TURNS]


def test_a_secret_the_model_thinks_about_is_redacted_in_the_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "hunter2-abcdef-0123"
    monkeypatch.setenv("DB_PASSWORD", secret)
    default_redactor().refresh()
    try:
        root = project(tmp_path)
        model = write_script(
            root, [{"thinking": f"The password {secret} is in the env.", "content": "Done."}]
        )
        loop = make_loop(root, model)
        loop.run("Check the settings.")
        html = RunOutput.from_payload(loop.transcript.to_payload()).html()
        assert secret not in html and "The password [REDACTED:DB_PASSWORD] is in the env." in html
    finally:
        monkeypatch.delenv("DB_PASSWORD")
        default_redactor().refresh()


def test_the_live_view_shows_thinking_as_it_streams_and_holds_back_a_secret_arriving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from architect_nb.agent.events import CostUpdate, RunStarted, StepStarted, ThinkingDelta
    from architect_nb.notebook.output.live import LiveView

    secret = "tok-live-9f8e7d6c5b4a"
    monkeypatch.setenv("LIVE_TOKEN", secret)
    default_redactor().refresh()
    try:
        view = LiveView()
        view.on_event(
            RunStarted(
                run_id="r",
                task="t",
                agent="build",
                model="m",
                mode="yolo",
                dry_run=False,
                workspace="",
                tools=(),
            )
        )
        view.on_event(StepStarted(run_id="r", step=1))
        view.on_event(
            ThinkingDelta(
                run_id="r",
                step=1,
                # Longer than any holdback (256 at most): what the machine's own secrets make it never
                # hides all of it (CI's environment holds a long token).
                text="Let me go through the settings and the files they name, one by one, before I change "
                "anything. " * 4 + "First I check the token " + secret[:8],
            )
        )
        shown = view._bundle()["text/html"]
        assert "Thinking (" in shown and secret[:8] not in shown  # a secret may be arriving: held back
        view.on_event(ThinkingDelta(run_id="r", step=1, text=secret[8:] + " and then stop. " + "x " * 200))
        shown = view._bundle()["text/html"]
        assert secret not in shown and "[REDACTED:LIVE_TOKEN] and then stop." in shown
        view.on_event(
            CostUpdate(
                run_id="r",
                step=1,
                prompt_tokens=10,
                completion_tokens=50,
                cost_usd=0.0,
                total_tokens=60,
                total_cost_usd=0.0,
                priced=True,
                reasoning_tokens=40,
                total_reasoning_tokens=40,
            )
        )
        assert "60 tokens, 40 thinking" in view._bundle()["text/html"]
    finally:
        monkeypatch.delenv("LIVE_TOKEN")
        default_redactor().refresh()
