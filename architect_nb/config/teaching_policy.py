"""The teaching policy that holds for a run: each level's `teaching:` setting, and the strictest of them.

The levels, strongest first:
1. SYSTEM: a file only the administrator can write (`$ARCHITECT_NB_SYSTEM_CONFIG`, default
   `/etc/architect-nb/config.yaml`), and `ARCHITECT_TEACHING__*` in the environment the process started with
   (the hub spawner's);
2. WORKSPACE: the workspace's `.architect.yaml`;
3. NOTEBOOK: the notebook's metadata, `architect.teaching`;
4. KERNEL: `%architect config teaching.mode=...`.

No level loosens another, because every rule is the strictest any level sets: the strictest mode, only the
tools every level allows, the smallest budget and code limit. A level that cannot be read counts as `off`
and says where and why, so a typo never loosens a course's rules.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from architect_nb.config.schema import AppConfig, TeachingConfig, TeachingMode

__all__ = [
    "DEFAULT_SYSTEM_CONFIG",
    "STRICTNESS",
    "SYSTEM_CONFIG_ENV",
    "PolicyLevel",
    "TeachingOffError",
    "TeachingPolicy",
    "launch_environment",
    "notebook_level",
    "policy_for",
    "system_levels",
]

#: The modes from the loosest to the strictest.
STRICTNESS: tuple[TeachingMode, ...] = ("full", "explain", "hints", "off")
SYSTEM_CONFIG_ENV = "ARCHITECT_NB_SYSTEM_CONFIG"
DEFAULT_SYSTEM_CONFIG = Path("/etc/architect-nb/config.yaml")
_ENV_PREFIX = "ARCHITECT_TEACHING__"
_MAX_SYSTEM_FILE = 256 * 1024

Level = Literal["system", "workspace", "notebook", "kernel"]


class TeachingOffError(Exception):
    """The teaching policy turns the agent off: the message is the teacher's, with who set the policy."""


@dataclass(frozen=True, slots=True)
class PolicyLevel:
    """One level's teaching setting and where it was written.

    Attributes:
        level: Which level set it.
        origin: Where, for people: "the system file /etc/architect-nb/config.yaml:2".
        setting: What it sets (`off` when it could not be read).
        problem: Why the level could not be read, if it could not.
    """

    level: Level
    origin: str
    setting: TeachingConfig
    problem: str = ""

    @classmethod
    def unreadable(cls, level: Level, origin: str, problem: str) -> PolicyLevel:
        """A level that cannot be read holds as `off` (fail closed), and says why."""
        message = (
            f"the teaching policy in {origin} cannot be read ({problem}), so the agent is off until it is "
            "fixed"
        )
        return cls(level, origin, TeachingConfig(mode="off", message=message), problem)

    def sets(self, key: str) -> bool:
        return key in self.setting.model_fields_set


@dataclass(frozen=True, slots=True)
class TeachingPolicy:
    """The rules that hold: the strictest of every level's."""

    levels: tuple[PolicyLevel, ...] = field(default_factory=tuple)

    def with_level(self, level: PolicyLevel | None) -> TeachingPolicy:
        """This policy with one more level, which can only make it stricter."""
        return self if level is None else TeachingPolicy((*self.levels, level))

    @property
    def decided_by(self) -> PolicyLevel | None:
        """The level whose mode holds (the strongest among those that set the strictest mode)."""
        strictest: PolicyLevel | None = None
        for level in self.levels:
            rank = STRICTNESS.index(level.setting.mode)
            if rank > 0 and (strictest is None or rank > STRICTNESS.index(strictest.setting.mode)):
                strictest = level
        return strictest

    @property
    def mode(self) -> TeachingMode:
        level = self.decided_by
        return level.setting.mode if level is not None else "full"

    @property
    def writes(self) -> bool:
        """Whether the agent may write files, cells or the kernel."""
        return self.mode == "full"

    @property
    def message(self) -> str:
        """The teacher's words: the deciding level's, else the strongest level's that has any."""
        level = self.decided_by
        if level is not None and level.setting.message:
            return level.setting.message
        return next((lv.setting.message for lv in self.levels if lv.setting.message), "")

    @property
    def code_lines(self) -> int:
        """hints: the longest code block the cell shows."""
        return min((lv.setting.code_lines for lv in self.levels if lv.sets("code_lines")), default=3)

    @property
    def tools(self) -> frozenset[str] | None:
        """The only tools allowed (those every level that names tools allows); None: no such list."""
        allowed: frozenset[str] | None = None
        for level in self.levels:
            if level.setting.tools is not None:
                named = frozenset(level.setting.tools)
                allowed = named if allowed is None else allowed & named
        return allowed

    @property
    def budget_usd(self) -> float | None:
        budgets = [lv.setting.budget_usd for lv in self.levels if lv.setting.budget_usd is not None]
        return min(budgets, default=None)

    @property
    def problems(self) -> list[str]:
        return [f"{level.origin}: {level.problem}" for level in self.levels if level.problem]

    @property
    def require_provenance(self) -> bool:
        return any(level.setting.require_provenance for level in self.levels)

    def strictest(self) -> TeachingConfig:
        """The rules that hold, as one setting."""
        return TeachingConfig(
            mode=self.mode,
            message=self.message,
            code_lines=self.code_lines,
            tools=sorted(self.tools) if self.tools is not None else None,
            budget_usd=self.budget_usd,
            require_provenance=self.require_provenance,
        )

    def allows_tool(self, name: str) -> bool:
        tools = self.tools
        return tools is None or name in tools

    def who(self) -> str:
        level = self.decided_by
        return level.origin if level is not None else "no policy"

    def off_message(self) -> str:
        """What `%%architect` says when the policy turns it off."""
        words = self.message or "The agent is turned off for this notebook."
        return f"{words} (teaching policy 'off', set by {self.who()})"

    def refusal(self, tool: str, what: str = "") -> str:
        """The sentence a refused call gets: the policy, who set it, and what the agent may do instead."""
        if not self.allows_tool(tool):
            listed = ", ".join(sorted(self.tools or ())) or "none"
            return (
                f"{tool} is not among the tools the teaching policy allows ({listed}; set by "
                f"{self._tools_origin()}). Use one of those."
            )
        done = f" ({what})" if what else ""
        said = f" The teacher says: {self.message}" if self.message else ""
        return (
            f"{tool}{done} was not run: the teaching policy '{self.mode}' (set by {self.who()}) lets the "
            "agent read, search and explain, but not write files, cells or the kernel. Explain what to "
            f"change and let the student make the change.{said}"
        )

    def prompt_note(self) -> str | None:
        """What the system prompt says about the policy; None under `full`."""
        mode = self.mode
        if mode in ("full", "off"):
            return None
        note = (
            f"Teaching policy '{mode}' (set by {self.who()}): you are helping a student learn. You may read, "
            "search and look at variables to explain and answer, but you cannot write files, cells or the "
            "kernel; say what to change and why, and let the student do it."
        )
        if mode == "hints":
            note += (
                " Guide rather than solve: ask a question back, point to the line that matters, name the "
                "concept or function to look up. Never write the solution; code examples at most "
                f"{self.code_lines} line(s)."
            )
        return note

    def describe(self) -> str:
        """One line for `%architect status`."""
        if self.mode == "full" and not self.levels:
            return "full (no policy set)"
        parts = [f"{self.mode} (set by {self.who()})" if self.mode != "full" else "full"]
        if (tools := self.tools) is not None:
            parts.append(f"tools: {', '.join(sorted(tools)) or 'none'}")
        if (budget := self.budget_usd) is not None:
            parts.append(f"budget ${budget:g} per run")
        if self.mode == "hints":
            parts.append(f"code blocks over {self.code_lines} line(s) cut")
        parts += [f"unreadable: {problem}" for problem in self.problems]
        return "; ".join(parts)

    def _tools_origin(self) -> str:
        return ", ".join(lv.origin for lv in self.levels if lv.setting.tools is not None)


def policy_for(config: AppConfig, environ: Mapping[str, str] | None = None) -> TeachingPolicy:
    """The policy a run under `config` starts with: the system level's, then the config's levels (the
    notebook's joins when the run reads its notebook: `TeachingPolicy.with_level`)."""
    levels = config.teaching_levels
    if not levels and config.teaching != TeachingConfig():  # an AppConfig built in code
        levels = (PolicyLevel("workspace", "the configuration's teaching section", config.teaching),)
    return TeachingPolicy((*system_levels(environ), *levels))


# --------------------------------------------------------------------------- the system level


@functools.cache
def launch_environment() -> Mapping[str, str]:
    """The policy's part of the environment the process started with, read once: code run later in the
    kernel (`os.environ[...] = ...`) does not change what the spawner set."""
    return {
        name: value
        for name, value in os.environ.items()
        if name.startswith(_ENV_PREFIX) or name == SYSTEM_CONFIG_ENV
    }


def system_levels(environ: Mapping[str, str] | None = None) -> list[PolicyLevel]:
    """The system file's policy and the spawner environment's, each when set."""
    env = launch_environment() if environ is None else environ
    levels = []
    named = env.get(SYSTEM_CONFIG_ENV, "").strip()
    path = Path(named).expanduser() if named else DEFAULT_SYSTEM_CONFIG
    if named or path.exists():
        levels.append(_system_file(path))
    settings = {
        name.removeprefix(_ENV_PREFIX).lower(): _scalar(value)
        for name, value in env.items()
        if name.startswith(_ENV_PREFIX)
    }
    if settings:
        names = ", ".join(sorted(n for n in env if n.startswith(_ENV_PREFIX)))
        levels.append(_validated("system", f"the environment ({names})", settings))
    return levels


def _system_file(path: Path) -> PolicyLevel:
    origin = f"the system file {path}"
    try:
        if path.stat().st_size > _MAX_SYSTEM_FILE:
            return PolicyLevel.unreadable("system", origin, f"it is over {_MAX_SYSTEM_FILE // 1024} KB")
        text = path.read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return PolicyLevel.unreadable("system", origin, " ".join(str(exc).split())[:300])
    if data is None:
        return PolicyLevel("system", origin, TeachingConfig())
    lines = _key_lines(node)
    if not isinstance(data, dict):
        return PolicyLevel.unreadable("system", origin, "it must hold a mapping with a teaching: section")
    other = [key for key in data if key != "teaching"]
    if other:
        where = f"{path}:{lines.get((str(other[0]),), 1)}"
        return PolicyLevel.unreadable(
            "system", origin, f"{where}: only teaching: is read from the system file, not {other[0]!r}"
        )
    line = lines.get(("teaching",), 1)
    return _validated("system", f"{origin}:{line}", data.get("teaching"), lines, path)


def _key_lines(node: Any, key: tuple[str, ...] = ()) -> dict[tuple[str, ...], int]:
    lines: dict[tuple[str, ...], int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            here = (*key, str(key_node.value))
            lines.setdefault(here, key_node.start_mark.line + 1)
            lines.update(_key_lines(value_node, here))
    return lines


def _scalar(raw: str) -> Any:
    try:
        return yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        return raw


# --------------------------------------------------------------------------- any level's setting


def notebook_level(metadata: Any, where: str = "the notebook's metadata") -> PolicyLevel | None:
    """The notebook's own policy (`metadata.architect.teaching`), if it sets one."""
    if not isinstance(metadata, Mapping):
        return None
    architect = metadata.get("architect")
    if architect is None:
        return None
    origin = f"{where} (architect.teaching)"
    if not isinstance(architect, Mapping):
        return PolicyLevel.unreadable("notebook", origin, "metadata.architect is not a mapping")
    if "teaching" not in architect:
        return None
    return _validated("notebook", origin, architect["teaching"])


def _validated(
    level: Level,
    origin: str,
    raw: Any,
    lines: Mapping[tuple[str, ...], int] | None = None,
    path: Path | None = None,
) -> PolicyLevel:
    if raw is None:
        return PolicyLevel(level, origin, TeachingConfig())
    if not isinstance(raw, Mapping):
        problem = f"teaching must be a mapping (mode: ...), not {type(raw).__name__}"
        return PolicyLevel.unreadable(level, origin, problem)
    try:
        return PolicyLevel(level, origin, TeachingConfig.model_validate(dict(raw)))
    except ValidationError as exc:
        errors = []
        for error in exc.errors(include_url=False, include_input=False):
            key = ".".join(str(part) for part in error["loc"]) or "teaching"
            line = (lines or {}).get(("teaching", str(error["loc"][0])) if error["loc"] else ("teaching",))
            at = f"{path}:{line}: " if path is not None and line is not None else ""
            errors.append(f"{at}teaching.{key}: {error['msg']}")
        return PolicyLevel.unreadable(level, origin, "; ".join(errors))
