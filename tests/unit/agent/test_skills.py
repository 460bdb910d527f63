"""Skills: names and descriptions in the prompt; the body reaches the model only when it reads the skill."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from architect_nb.agent.conversation.skills import MAX_SKILL_BYTES, find_skills
from architect_nb.agent.factory import create_loop
from architect_nb.config import load_config
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.testing.openai_server import OpenAIStubServer, Reply

BODY = "Step one of the release dance: bump the version in pyproject.toml."


def _skill(base: Path, name: str, text: str) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    return folder


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def workspace(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "ws"
    folder = _skill(
        root / ".claude" / "skills",
        "release",
        f"---\nname: release\ndescription: Cut a release.\n---\n{BODY}\n",
    )
    (folder / "checklist.md").write_text("- tag it\n")
    _skill(
        root / ".architect" / "skills",
        "lint",
        "---\nname: lint\ndescription: Lint the code.\n---\nRun ruff.\n",
    )
    _skill(
        home / ".claude" / "skills", "mine", "---\nname: mine\ndescription: My own way.\n---\nDo it my way.\n"
    )
    return root


@pytest.fixture
def server() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as stub:
        yield stub


def test_only_names_go_in_the_prompt_and_the_body_follows_the_models_read(
    workspace: Path, server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_API_KEY", "sk-stub-0123456789")
    server.queue(
        Reply.calls(("read_file", {"path": "skill:release"})),
        Reply.calls(
            ("read_file", {"path": "skill:release/checklist.md"}), ("read_file", {"path": "skill:mine"})
        ),
        Reply.calls(
            ("read_file", {"path": "skill:release/../../../secret.txt"}),
            ("read_file", {"path": "skill:nope"}),
        ),
        Reply.text("Released."),
    )
    (workspace.parent / "secret.txt").write_text("outside the skill")
    llm = {"model": "openai/stub", "api_base": server.url, "api_key_env": "STUB_API_KEY"}
    config = load_config(overrides={"workspace.root": str(workspace), "llm": llm}, environ={})
    loop = create_loop(config, agent="plan", confirmer=ScriptedConfirmer([]))
    result = loop.run("Cut the release")
    assert result.stop_reason == "completed", result.message
    first = server.requests[0]["messages"]
    system = first[0]["content"]
    assert "- release: Cut a release." in system and "- lint: Lint the code." in system
    assert "- mine: My own way." in system and "skill:NAME" in system
    assert all(BODY not in str(m["content"]) for m in first)  # not before the model asks
    second = server.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and BODY in second[-1]["content"]
    third = server.requests[2]["messages"]
    assert "- tag it" in third[-2]["content"] and "Do it my way." in third[-1]["content"]
    fourth = server.requests[3]["messages"]
    assert (
        "escapes the workspace" in fourth[-2]["content"] and "outside the skill" not in fourth[-2]["content"]
    )
    assert "There is no skill 'nope'. The skills: lint, mine, release." in fourth[-1]["content"]


def test_bad_skills_are_left_out_with_a_reason(workspace: Path, home: Path, tmp_path: Path) -> None:
    skills = workspace / ".claude" / "skills"
    _skill(skills, "bare", "Just a body, no front matter.\n")
    _skill(skills, "badname", "---\nname: Bad Name\ndescription: x\n---\n")
    _skill(skills, "nodesc", "---\nname: nodesc\n---\nbody\n")
    _skill(skills, "dup", "---\nname: lint\ndescription: again\n---\n")
    (_skill(skills, "huge", "---\nname: huge\ndescription: big\n---\n") / "SKILL.md").write_bytes(
        b"x" * (MAX_SKILL_BYTES + 1)
    )
    (_skill(skills, "binary", "") / "SKILL.md").write_bytes(b"---\x00\xff")
    outside = _skill(tmp_path / "elsewhere", "evil", "---\nname: evil\ndescription: escape\n---\n")
    os.symlink(outside, skills / "evil")
    found, problems = find_skills(workspace, home)
    assert sorted(s.name for s in found) == ["lint", "mine", "release"]
    said = "\n".join(problems)
    assert "Skill .claude/skills/bare left out: SKILL.md has no front matter; begin it with '---'" in said
    assert "needs a name of lowercase letters, digits and hyphens (64 at most), not 'Bad Name'" in said
    assert "Skill .claude/skills/nodesc left out: its front matter has no description." in said
    assert "Skill .architect/skills/lint left out: .claude/skills/dup has the name 'lint'." in said
    assert "Skill .claude/skills/huge left out: SKILL.md is over 262,144 bytes." in said
    assert "Skill .claude/skills/binary left out: SKILL.md is not UTF-8 text." in said
    assert "Skill .claude/skills/evil left out: it is a symlink to a place outside" in said
    assert (outside / "SKILL.md").read_text().startswith("---")  # nothing changed
