"""Helpers for agent tests: a workspace with a real project, scripts written as YAML, and a loop factory."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from architect_nb.agent import AgentLoop, create_loop
from architect_nb.agent.events import AgentEvent
from architect_nb.config import load_config
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer

SAMPLE_PROJECT = Path(__file__).resolve().parents[2] / "notebooks" / "sample_project"


def copy_sample_project(dest: Path) -> Path:
    shutil.copytree(SAMPLE_PROJECT, dest)
    return dest


def write_script(
    workspace: Path, turns: list[dict[str, Any]], name: str = "script.yaml", **extra: Any
) -> str:
    scripts = workspace.parent / "scripts"
    scripts.mkdir(exist_ok=True)
    path = scripts / name
    path.write_text(yaml.safe_dump({"turns": turns, **extra}, sort_keys=False))
    return f"scripted/{path}"


def make_loop(
    workspace: Path,
    model: str,
    *,
    answers: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
    events: list[AgentEvent] | None = None,
    **kwargs: Any,
) -> AgentLoop:
    config = load_config(overrides={"workspace.root": str(workspace), **(overrides or {})}, environ={})
    confirmer = ScriptedConfirmer(answers or [], default="deny: no answer scripted")
    sink = events.append if events is not None else None
    return create_loop(config, model=model, confirmer=confirmer, on_event=sink, **kwargs)


def kinds(events: list[AgentEvent]) -> list[str]:
    return [e.kind for e in events]
