"""Skills, as Claude Code defines them: a folder with a `SKILL.md` (front matter: name, description; a body).

They are found in the workspace's `.claude/skills/` and `.architect/skills/` and in the user's
`~/.claude/skills/`, in that order (the first of a name wins). Only each skill's name and description go into
the system prompt; the model reads the body, and any file of the skill's folder, with `read_file` and the path
`skill:NAME` (or `skill:NAME/FILE`) when it uses the skill, so a skill costs a line until it is needed and no
tool schema at all. A `SKILL.md` without front matter, a huge or binary one, or a skill folder that is a
symlink out of where it was found is left out with a message saying why.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from architect_nb.paths.validators import is_inside
from architect_nb.redaction import default_redactor

__all__ = ["SKILL_PREFIX", "Skill", "find_skills", "skills_prompt"]

SKILL_PREFIX = "skill:"
MAX_SKILL_BYTES = 256 * 1024
MAX_DESCRIPTION = 1024
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")  # Claude Code's rule: lowercase letters, digits, hyphens


@dataclass(frozen=True, kw_only=True)
class Skill:
    name: str
    description: str
    folder: Path  # resolved; read_file reads `skill:NAME/...` inside it only
    where: str  # where it was found, as shown: ".claude/skills/x" or "~/.claude/skills/x"


def _places(root: Path, home: Path | None) -> list[tuple[Path, str]]:
    places = [
        (root / ".claude" / "skills", ".claude/skills"),
        (root / ".architect" / "skills", ".architect/skills"),
    ]
    if home is not None:
        places.append((home / ".claude" / "skills", "~/.claude/skills"))
    return places


def find_skills(root: Path, home: Path | None = None) -> tuple[list[Skill], list[str]]:
    """The skills of the workspace `root` and of the user's folder `home` (default: `~`), and the problems
    met (each a sentence naming the file and what is wrong)."""
    home = Path.home() if home is None else home
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for base, shown in _places(root.resolve(), home):
        if not base.is_dir():
            continue
        real_base = Path(os.path.realpath(base))
        for folder in sorted(base.iterdir()):
            if not (folder / "SKILL.md").exists() and not folder.is_symlink():
                continue
            where = f"{shown}/{folder.name}"
            skill = _read(folder, real_base, where, problems)
            if skill is None:
                continue
            if skill.name in skills:
                problems.append(
                    f"Skill {where} left out: {skills[skill.name].where} has the name {skill.name!r}."
                )
                continue
            skills[skill.name] = skill
    return list(skills.values()), problems


def _read(folder: Path, base: Path, where: str, problems: list[str]) -> Skill | None:
    real = Path(os.path.realpath(folder))
    file = Path(os.path.realpath(folder / "SKILL.md"))
    if not is_inside(real, base) or not is_inside(file, real):
        problems.append(f"Skill {where} left out: it is a symlink to a place outside {base}.")
        return None
    try:
        if file.stat().st_size > MAX_SKILL_BYTES:
            problems.append(f"Skill {where} left out: SKILL.md is over {MAX_SKILL_BYTES:,} bytes.")
            return None
        data = file.read_bytes()
    except OSError as exc:
        problems.append(f"Skill {where} left out: SKILL.md cannot be read ({exc.strerror}).")
        return None
    try:
        if b"\x00" in data:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.append(f"Skill {where} left out: SKILL.md is not UTF-8 text.")
        return None
    meta = _front_matter(text)
    if meta is None:
        problems.append(
            f"Skill {where} left out: SKILL.md has no front matter; begin it with '---', then "
            "'name: ...' and 'description: ...' lines, then '---'."
        )
        return None
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not _NAME.match(name):
        problems.append(
            f"Skill {where} left out: its front matter needs a name of lowercase letters, digits and hyphens "
            f"(64 at most), not {name!r}."
        )
        return None
    if not isinstance(description, str) or not description.strip():
        problems.append(f"Skill {where} left out: its front matter has no description.")
        return None
    description = " ".join(description.split())[:MAX_DESCRIPTION]
    return Skill(name=name, description=description, folder=real, where=where)


def _front_matter(text: str) -> dict[str, object] | None:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        return None
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return None
    return meta if isinstance(meta, dict) else None


def skills_prompt(skills: list[Skill]) -> str:
    """The prompt's list of skills: one line each, and how to read one."""
    if not skills:
        return ""
    redact = default_redactor().redact
    lines = [
        "# Skills",
        "Skills hold instructions for particular tasks. When one fits the task, read its instructions first "
        f"with read_file path '{SKILL_PREFIX}NAME' (its other files: '{SKILL_PREFIX}NAME/FILE'), then follow "
        "them.",
    ]
    lines += [f"- {skill.name}: {redact(skill.description)}" for skill in skills]
    return "\n".join(lines)
