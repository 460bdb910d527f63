"""Threads through the Python API: follow-ups, forks, the scripted model across runs, and saving to disk."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
import yaml

from architect_nb.agent.conversation.context import ContextBuilder
from architect_nb.agent.conversation.thread import Thread, ThreadError
from architect_nb.agent.conversation.thread_store import THREAD_FORMAT_VERSION, ThreadStore
from architect_nb.agent.events import RunStarted
from architect_nb.agent.models.scripted import ScriptError, load_script
from architect_nb.execution.checkpoints.store import UndoReport
from architect_nb.notebook.threads import undo_note
from tests.support.agent import copy_sample_project, make_loop, write_script

READ = {"name": "read_file", "arguments": {"path": "shop/cart.py"}}
EDIT = {
    "name": "edit_file",
    "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "ws")


def first_run(ws: Path) -> Thread:
    model = write_script(ws, [{"tool_calls": [READ]}, {"content": "total() sums the prices."}], "one.yaml")
    result = make_loop(ws, model).run("What does total() do?")
    assert result.status == "success", result.message
    assert result.thread is not None
    return result.thread


def test_a_follow_up_run_sees_the_earlier_task_answer_and_tool_results(ws: Path) -> None:
    thread = first_run(ws)
    follow = write_script(
        ws,
        [
            {
                "expect": {"history_contains": ["What does total() do?", "def total", "sums the prices"]},
                "tool_calls": [EDIT],
            },
            {"content": "total() now returns a float."},
        ],
        "two.yaml",
    )
    events: list = []
    result = make_loop(ws, follow, answers=["approve"], events=events).run("Make it a float.", thread=thread)
    assert result.status == "success", result.message
    assert "total = 0.0" in (ws / "shop" / "cart.py").read_text()
    header = next(e for e in events if isinstance(e, RunStarted)).thread
    assert header is not None and header.follows_run == thread.runs[0].run_id
    assert header.runs == 1 and header.turns == 2 and header.context_tokens > 0
    assert [run.task for run in thread.runs] == ["What does total() do?", "Make it a float."]
    assert thread.turns == 4 and [len(run.step_ends) for run in thread.runs] == [2, 2]


def test_a_fresh_thread_does_not_see_another_runs_conversation(ws: Path) -> None:
    first_run(ws)
    follow = write_script(
        ws, [{"expect": {"history_contains": "What does total() do?"}, "content": "x"}], "two.yaml"
    )
    result = make_loop(ws, follow).run("Make it a float.")  # no thread: a new one
    assert result.stop_reason == "script_error"
    assert "expects the conversation to contain 'What does total() do?'" in result.message
    assert "--new" in result.message


def test_plan_then_build_continues_the_thread_with_each_agents_prompt(ws: Path) -> None:
    plan = write_script(ws, [{"tool_calls": [READ]}, {"content": "Plan: make total a float."}], "plan.yaml")
    planned = make_loop(ws, plan, agent="plan").run("Plan the float change.")
    assert planned.thread is not None
    build = write_script(
        ws,
        [
            {"expect": {"history_contains": "Plan: make total a float."}, "tool_calls": [EDIT]},
            {"content": "ok"},
        ],
        "build.yaml",
    )
    loop = make_loop(ws, build, answers=["approve"])
    done = loop.run("Do it.", thread=planned.thread)
    assert done.status == "success", done.message
    assert done.messages[0]["content"] == loop.agent.system_prompt  # the build prompt, not the plan one
    assert sum(1 for m in done.messages if m["role"] == "system") == 1


def test_fork_at_a_step_keeps_the_conversation_up_to_that_step(ws: Path) -> None:
    model = write_script(
        ws, [{"tool_calls": [READ]}, {"tool_calls": [EDIT]}, {"content": "done"}], "three.yaml"
    )
    result = make_loop(ws, model, overrides={"workspace.allow_delete": False}, mode="yolo").run("Fix it")
    thread = result.thread
    assert thread is not None and len(thread.runs[0].step_ends) == 3
    run_id = thread.runs[0].run_id
    fork = thread.fork(run_id, 1, name="what-if")
    assert fork.messages[-1]["role"] == "tool" and "def total" in fork.messages[-1]["content"]
    assert not any("edit_file" in json.dumps(m) for m in fork.messages)
    assert (
        fork.forked_from is not None
        and fork.forked_from.describe() == f"step 1 of run {run_id} (thread 'main')"
    )
    # An empty task carries on from the step: the model's next turn follows the tool result.
    carry = write_script(
        ws, [{"expect": {"tool_result_contains": "def total"}, "content": "I'd stop here."}], "carry.yaml"
    )
    events: list = []
    went_on = make_loop(ws, carry, events=events).run("", thread=fork)
    assert went_on.status == "success", went_on.message
    header = next(e for e in events if isinstance(e, RunStarted)).thread
    assert (
        header is not None
        and header.forked_from == fork.forked_from.describe()
        and header.follows_run is None
    )
    assert len(thread.messages) > len(fork.messages) - 1  # the source thread is untouched


def test_fork_errors_say_what_to_do(ws: Path) -> None:
    thread = first_run(ws)
    run_id = thread.runs[0].run_id
    with pytest.raises(ThreadError, match=r"has 2 steps; fork at a step from 1 to 2"):
        thread.fork(run_id, 3, name="x")
    with pytest.raises(ThreadError, match="no run 'nope'"):
        thread.fork("nope", None, name="x")
    whole = thread.fork(run_id, None, name="x")
    assert len(whole.messages) == len(thread.messages)
    with pytest.raises(ThreadError, match="task is empty"):  # the run ended there: nothing to carry on
        make_loop(ws, write_script(ws, [{"content": "x"}])).run("", thread=whole)


def test_a_thread_of_another_workspace_is_refused(ws: Path, tmp_path: Path) -> None:
    thread = first_run(ws)
    other = copy_sample_project(tmp_path / "other")
    model = write_script(other, [{"content": "x"}])
    with pytest.raises(ThreadError, match="belongs to the workspace"):
        make_loop(other, model).run("hello", thread=thread)


def test_an_undo_note_reaches_the_model_once(ws: Path) -> None:
    thread = first_run(ws)
    run_id = thread.runs[0].run_id
    thread.notes.append(undo_note(UndoReport(run_id=run_id, restored=["shop/cart.py"])))
    follow = write_script(
        ws, [{"expect": {"history_contains": f"the user undid run {run_id}"}, "content": "Noted."}], "u.yaml"
    )
    result = make_loop(ws, follow).run("Carry on.", thread=thread)
    assert result.status == "success", result.message
    user = [m["content"] for m in thread.messages if m["role"] == "user"]
    assert user[-1].startswith("[Note: the user undid run") and user[-1].endswith("Carry on.")
    assert "shop/cart.py" in user[-1] and thread.notes == []
    assert thread.runs[0].task == "What does total() do?"  # the undone run's messages stay


def test_a_recording_of_a_thread_replays_run_by_run(ws: Path, tmp_path: Path) -> None:
    recording = tmp_path / "rec.yaml"
    thread = first_run(ws)
    follow = write_script(ws, [{"tool_calls": [EDIT]}, {"content": "float now"}], "two.yaml")
    make_loop(ws, follow, answers=["approve"], record_to=recording).run("Make it a float.", thread=thread)
    script = yaml.safe_load(recording.read_text())
    assert [run["task"] for run in script["runs"]] == ["What does total() do?", "Make it a float."]
    assert script["runs"][1]["turns"][-1] == {"content": "float now"}
    # Replay both runs in a new thread, on a fresh copy of the project.
    again = copy_sample_project(tmp_path / "again")
    replay = f"scripted/{recording}"
    one = make_loop(again, replay).run("What does total() do?")
    two = make_loop(again, replay, answers=["approve"]).run("Make it a float.", thread=one.thread)
    assert (one.status, two.status) == ("success", "success"), two.message
    assert "total = 0.0" in (again / "shop" / "cart.py").read_text()
    three = make_loop(again, replay).run("More?", thread=two.thread)
    assert three.stop_reason == "script_error" and "records 2 run(s)" in three.message


def test_a_script_has_turns_or_runs(ws: Path) -> None:
    scripts = ws.parent / "scripts"
    scripts.mkdir(exist_ok=True)
    both = scripts / "both.yaml"
    both.write_text(yaml.safe_dump({"turns": [{"content": "a"}], "runs": [{"turns": [{"content": "b"}]}]}))
    with pytest.raises(ScriptError, match="either `turns`"):
        load_script(both)


def test_compression_never_drops_the_current_task() -> None:
    builder = ContextBuilder(keep_recent_steps=1, max_tool_result_chars=10_000)
    earlier = []
    for n in range(6):
        earlier += [
            {"role": "user", "content": f"old task {n}"},
            {"role": "assistant", "content": None, "tool_calls": [_call(n)]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "x" * 2000},
            {"role": "assistant", "content": f"answer {n}"},
        ]
    task = {"role": "user", "content": "THE CURRENT TASK"}
    messages = [{"role": "system", "content": "s"}, *earlier, task]
    for n in range(6, 10):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [_call(n)]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "y" * 2000},
        ]
    pinned = messages.index(task)
    report = builder.compress(messages, window_tokens=1500, pinned=pinned)
    assert report is not None and report.stage == "summarized"
    assert task in messages and messages[0]["content"] == "s"
    summaries = [m for m in messages if str(m.get("content", "")).startswith("[Summary of")]
    assert len(summaries) == 2  # one for the earlier runs, one for this run's older steps: never across
    assert messages.index(summaries[0]) < messages.index(task) < messages.index(summaries[1])
    assert "- user: old task 0" in summaries[0]["content"]
    # Tool calls and their results still pair up.
    ids = {c["id"] for m in messages for c in m.get("tool_calls") or []}
    assert ids == {m["tool_call_id"] for m in messages if m["role"] == "tool"}


def _call(n: int) -> dict:
    return {"id": f"c{n}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}


# ---------------------------------------------------------------------- the store


def test_the_store_saves_a_thread_once_and_appends_only_what_is_new(ws: Path, tmp_path: Path) -> None:
    store = ThreadStore(tmp_path / "threads")
    thread = first_run(ws)
    store.save(thread)
    path = tmp_path / "threads" / f"{thread.id}.jsonl"
    first = path.read_bytes()
    store.save(thread)
    assert path.read_bytes() == first  # nothing new, nothing written
    follow = write_script(ws, [{"content": "Still sums."}], "two.yaml")
    make_loop(ws, follow).run("Again?", thread=thread)
    store.save(thread)
    grown = path.read_bytes()
    assert grown.startswith(first) and len(grown) - len(first) < len(first)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    loaded = ThreadStore(tmp_path / "threads").load(thread.id)
    assert loaded.messages == thread.messages and loaded.turns == thread.turns
    assert [r.run_id for r in loaded.runs] == [r.run_id for r in thread.runs]
    assert loaded.runs[1].step_ends == thread.runs[1].step_ends


def test_saved_threads_are_redacted(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.redaction import default_redactor

    monkeypatch.setenv("SERVICE_API_KEY", "s3cret-value-123456")
    default_redactor().refresh()
    try:
        thread = Thread(name="t", workspace=str(ws))
        thread.begin_run(run_id="r1", task="use s3cret-value-123456 please", agent="build", model="m")
        thread.end_run(status="success", tokens=1, cost_usd=0.0)
        ThreadStore(tmp_path / "threads").save(thread)
        text = (tmp_path / "threads" / f"{thread.id}.jsonl").read_text()
        assert "s3cret-value-123456" not in text and "[REDACTED:SERVICE_API_KEY]" in text
    finally:
        monkeypatch.delenv("SERVICE_API_KEY")
        default_redactor().refresh()


def test_finding_threads_by_name_and_run(ws: Path, tmp_path: Path) -> None:
    store = ThreadStore(tmp_path / "threads")
    old = _saved(store, "refactor", str(ws), "r-old")
    os.utime(store.directory / f"{old.id}.jsonl", (1, 1_000_000_000))
    new = _saved(store, "refactor", str(ws), "r-new")
    _saved(store, "elsewhere", "/some/other/ws", "r-other")
    found = store.find_name("refactor", str(ws))
    assert found is not None and found.id == new.id  # the newest by that name
    assert store.find_name("nothing", str(ws)) is None
    assert store.find_name("elsewhere", str(ws)) is None  # another project's thread of that name
    elsewhere = store.find_name("elsewhere", "/some/other/ws")
    assert elsewhere is not None and elsewhere.workspace == "/some/other/ws"
    hit = store.find_run("r-ol")
    assert hit is not None and hit[0].id == old.id and hit[1] == "r-old"
    with pytest.raises(ThreadError, match="more than one saved run"):
        store.find_run("r-")
    assert store.find_run("zzz") is None


def test_damaged_and_newer_thread_files_are_clear_errors_and_the_rest_still_load(
    ws: Path, tmp_path: Path
) -> None:
    store = ThreadStore(tmp_path / "threads")
    good = _saved(store, "good", str(ws), "r1")
    torn = _saved(store, "torn", str(ws), "r2")
    with (store.directory / f"{torn.id}.jsonl").open("a") as out:
        out.write('{"kind": "messages", "messa')  # a save cut short by a crash
    assert store.load(torn.id).runs[0].run_id == "r2"
    damaged = _saved(store, "damaged", str(ws), "r3")
    path = store.directory / f"{damaged.id}.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + "not json\n" + "".join(lines[1:]))
    newer = _saved(store, "newer", str(ws), "r4")
    path = store.directory / f"{newer.id}.jsonl"
    header, rest = path.read_text().split("\n", 1)
    data = json.loads(header)
    data["version"] = THREAD_FORMAT_VERSION + 1
    path.write_text(json.dumps(data) + "\n" + rest)
    with pytest.raises(ThreadError, match="damaged at line 2; start a new thread"):
        store.load(damaged.id)
    with pytest.raises(ThreadError, match="saved by a newer architect-nb"):
        store.load(newer.id)
    listed = list(store.saved())
    names = {item.name for item in listed if not isinstance(item, ThreadError)}
    assert names == {"good", "torn"} and sum(isinstance(i, ThreadError) for i in listed) == 2
    assert store.load(good.id).name == "good"
    with pytest.raises(ThreadError, match="is not a thread id"):
        store.load("../../etc/passwd")


def test_old_threads_are_pruned(ws: Path, tmp_path: Path) -> None:
    store = ThreadStore(tmp_path / "threads", keep_days=1)
    old = _saved(store, "old", str(ws), "r1")
    kept = _saved(store, "kept", str(ws), "r2")
    os.utime(store.directory / f"{old.id}.jsonl", (1, 1))
    ThreadStore(tmp_path / "threads", keep_days=1)  # opening a store prunes
    assert not (store.directory / f"{old.id}.jsonl").exists()
    assert (store.directory / f"{kept.id}.jsonl").exists()


def _saved(store: ThreadStore, name: str, workspace: str, run_id: str) -> Thread:
    thread = Thread(name=name, workspace=workspace)
    thread.begin_run(run_id=run_id, task=f"task of {name}", agent="build", model="m")
    thread.add([{"role": "assistant", "content": "ok"}], step_done=True)
    thread.end_run(status="success", tokens=5, cost_usd=0.001)
    store.save(thread)
    return thread


# ---------------------------------------------------------------------- a kernel's threads


def test_kernel_threads_pick_the_conversation_each_cell_continues(ws: Path, tmp_path: Path) -> None:
    from architect_nb.config import load_config
    from architect_nb.notebook.magics import UsageError, parse_cell_line
    from architect_nb.notebook.threads import KernelThreads

    state = tmp_path / "state"
    config = load_config(overrides={"workspace.root": str(ws), "checkpoints.dir": str(state)}, environ={})
    threads = KernelThreads()
    main = threads.select(parse_cell_line(""), config)
    assert main.name == "main" and not main.runs
    thread = first_run(ws)
    thread.name = "main"
    threads.remember(thread, config)
    assert threads.select(parse_cell_line(""), config) is thread  # a follow-up
    assert threads.select(parse_cell_line("--new"), config).name == "main-2"
    assert threads.select(parse_cell_line("--thread other"), config).name == "other"
    run_id = thread.runs[0].run_id
    fork = threads.select(parse_cell_line("--fork @main/1:1"), config)
    assert fork.name == "main-fork" and fork.forked_from is not None and fork.forked_from.run_id == run_id
    assert threads.select(parse_cell_line(f"--fork {run_id[:5]}"), config).messages == thread.messages
    for line, message in (
        ("--fork @nothing", "no thread 'nothing'"),
        ("--fork @main/2", "thread 'main' has 1 run(s); there is no run 2"),
        (f"--fork {run_id}:7", "has 2 steps; fork at a step from 1 to 2"),
        ("--fork 0123456789ab", "no run '0123456789ab' in this kernel's threads or the saved ones"),
        (f"--fork {run_id} --thread main", "this kernel has a thread 'main' already"),
    ):
        with pytest.raises(UsageError, match=re.escape(message)):
            threads.select(parse_cell_line(line), config)
    # Each workspace has its own current thread; a named thread stays in its own workspace.
    other = copy_sample_project(tmp_path / "other")
    elsewhere = load_config(
        overrides={"workspace.root": str(other), "checkpoints.dir": str(state)}, environ={}
    )
    assert threads.select(parse_cell_line(""), elsewhere).workspace == str(other)
    with pytest.raises(UsageError, match="thread 'main' belongs to the workspace"):
        threads.select(parse_cell_line("--thread main"), elsewhere)
    # Saved on disk: a new kernel finds it by name, and lists it.
    fresh = KernelThreads()
    assert fresh.select(parse_cell_line("--thread main"), config).id == thread.id
    listing = fresh.listing(config)
    assert "main" in listing and thread.id in listing and "saved" in listing
