"""Loading `.architect.yaml`, `ARCHITECT_*` environment variables and explicit arguments into an `AppConfig`.

Precedence, lowest first: the YAML file < environment variables < explicit arguments. The `teaching:` section
is the exception: no source overrides another there, the strictest holds (`teaching_policy`).
Every mistake is reported
with where it came from: the file and line, the variable, or the argument.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from architect_nb.config.schema import AppConfig, TeachingConfig

__all__ = ["CONFIG_FILENAMES", "ConfigError", "find_config_file", "load_config"]

CONFIG_FILENAMES = (".architect.yaml", ".architect.yml")

# Short names users expect, besides the generic ARCHITECT_<SECTION>__<KEY>.
ENV_SHORTCUTS: dict[str, tuple[str, ...]] = {
    "ARCHITECT_MODEL": ("llm", "model"),
    "ARCHITECT_API_BASE": ("llm", "api_base"),
    "ARCHITECT_WORKSPACE": ("workspace", "root"),
    "ARCHITECT_LOG_LEVEL": ("logging", "level"),
    "ARCHITECT_LOG_FILE": ("logging", "file"),
}


class ConfigError(ValueError):
    """The configuration is invalid. The message names each bad key and where it was set."""


Key = tuple[str | int, ...]


def find_config_file(start: Path | None = None) -> Path | None:
    """The nearest `.architect.yaml` in `start` (default: the current folder) or its parents.

    The search stops at the first folder holding `.git`, so a file outside the repository is never picked up.
    """
    folder = (start or Path.cwd()).resolve()
    for candidate_dir in (folder, *folder.parents):
        for name in CONFIG_FILENAMES:
            candidate = candidate_dir / name
            if candidate.is_file():
                return candidate
        if (candidate_dir / ".git").exists():
            return None
    return None


def load_config(
    path: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    search_from: Path | None = None,
    overrides_label: str = "argument",
) -> AppConfig:
    """Build the configuration.

    Args:
        path: A YAML file. When omitted, the nearest `.architect.yaml` is used if there is one.
        overrides: Explicit settings, nested (`{"llm": {"model": "m"}}`) or dotted (`{"llm.model": "m"}`).
        environ: The environment to read `ARCHITECT_*` from (default: `os.environ`).
        search_from: Where to start looking for a config file when `path` is omitted.
        overrides_label: What the overrides are, in messages ("%architect config"). Their `teaching.*` keys
            are a level below the file's (`teaching_policy`): the strictest of the two holds.

    Raises:
        ConfigError: If the file cannot be read or parsed, or any key is unknown or has a bad value.
    """
    sources: dict[Key, str] = {}
    data: dict[str, Any] = {}
    config_file: Path | None
    if path is not None:
        config_file = Path(path).expanduser()
        if not config_file.is_file():
            raise ConfigError(f"Config file {config_file} does not exist.")
    else:
        config_file = find_config_file(search_from)
    if config_file is not None:
        data = _read_yaml(config_file, sources)

    env = os.environ if environ is None else environ
    for key, value in _from_environment(env).items():
        if key[0] == "teaching":  # the spawner's: the system level (`teaching_policy.system_levels`)
            continue
        _set(data, key, value[1])
        _mark(sources, key, f"environment variable {value[0]}")
    # The session's teaching settings are a level of their own, below the file's: they cannot loosen it.
    session_teaching: dict[str, Any] = {}
    for raw_key, value in (overrides or {}).items():
        for key, leaf in _flatten(tuple(raw_key.split(".")), value):
            _set(session_teaching if key[0] == "teaching" else data, key, leaf)
            _mark(sources, key, f"{overrides_label} {'.'.join(map(str, key))}")

    try:
        config = AppConfig.model_validate(data)
        _anchor_workspace(config, sources, config_file)  # which checks workspace.read_roots against it
    except ValidationError as exc:
        raise ConfigError(_explain(exc, sources, config_file)) from None
    session = _session_teaching(session_teaching.get("teaching"), overrides_label)
    _record_teaching(config, session, sources, overrides_label)
    return config


def _session_teaching(raw: Any, label: str) -> TeachingConfig | None:
    if raw is None:
        return None
    try:
        return TeachingConfig.model_validate(raw if isinstance(raw, dict) else {"mode": raw})
    except ValidationError as exc:
        problems = [
            f"{label} teaching.{'.'.join(map(str, e['loc']))}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)
        ]
        raise ConfigError("; ".join(problems) + ".") from None


def _record_teaching(
    config: AppConfig, session: TeachingConfig | None, sources: dict[Key, str], overrides_label: str
) -> None:
    """The file's and the session's teaching settings, as levels; `config.teaching` is their strictest."""
    from architect_nb.config.teaching_policy import PolicyLevel, TeachingPolicy

    levels = []
    if ("teaching",) in sources and not sources[("teaching",)].startswith(overrides_label):
        origin = f"the workspace's config {sources[('teaching',)]}"
        levels.append(PolicyLevel("workspace", origin, config.teaching))
    if session is not None:
        keys = ", ".join(f"teaching.{key}" for key in sorted(session.model_fields_set))
        levels.append(PolicyLevel("kernel", f"{overrides_label} ({keys})", session))
    if levels:
        config.set_teaching_levels(tuple(levels))
        config.teaching = TeachingPolicy(tuple(levels)).strictest()


def _anchor_workspace(config: AppConfig, sources: dict[Key, str], file: Path | None) -> None:
    """A relative workspace root is relative to the config file's folder, unless an override set it."""
    root = config.workspace.root.expanduser()
    if not root.is_absolute():
        origin = sources.get(("workspace", "root"))
        from_file = file is not None and (origin is None or origin.startswith(f"{file}:"))
        root = (file.parent if from_file and file is not None else Path.cwd()) / root
    config.workspace.root = root.resolve()


# --------------------------------------------------------------------------- YAML with line numbers


def _read_yaml(file: Path, sources: dict[Key, str]) -> dict[str, Any]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read config file {file}: {exc}.") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file} is not valid YAML: {exc}") from None
    if node is None:
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(
            f"{file} must hold a mapping of sections (workspace:, llm:, ...), not a {node.tag}."
        )
    _record_lines(node, (), file, sources)
    data = yaml.safe_load(text)
    return data if isinstance(data, dict) else {}


def _record_lines(node: yaml.Node, key: Key, file: Path, sources: dict[Key, str]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            name = key_node.value
            line = key_node.start_mark.line + 1
            if name in seen:
                raise ConfigError(
                    f"{file}:{line}: key {name!r} is repeated (first set on line {seen[name]})."
                )
            seen[name] = line
            sources[(*key, name)] = f"{file}:{line}"
            _record_lines(value_node, (*key, name), file, sources)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            sources[(*key, index)] = f"{file}:{item.start_mark.line + 1}"
            _record_lines(item, (*key, index), file, sources)


# --------------------------------------------------------------------------- environment and overrides


def _from_environment(env: Mapping[str, str]) -> dict[Key, tuple[str, Any]]:
    found: dict[Key, tuple[str, Any]] = {}
    for name, raw in env.items():
        if name in ENV_SHORTCUTS:
            key: Key = ENV_SHORTCUTS[name]
        elif name.startswith("ARCHITECT_") and "__" in name:
            key = tuple(part.lower() for part in name.removeprefix("ARCHITECT_").split("__"))
        else:
            continue  # other ARCHITECT_* names are hook context, not configuration
        found[key] = (name, _parse_scalar(raw))
    return found


def _parse_scalar(raw: str) -> Any:
    try:
        return yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        return raw


def _flatten(prefix: Key, value: Any) -> list[tuple[Key, Any]]:
    if isinstance(value, Mapping) and value:
        out: list[tuple[Key, Any]] = []
        for k, v in value.items():
            out.extend(_flatten((*prefix, str(k)), v))
        return out
    return [(prefix, value)]


def _set(data: dict[str, Any], key: Key, value: Any) -> None:
    node: Any = data
    for part in key[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[key[-1]] = value


def _mark(sources: dict[Key, str], key: Key, origin: str) -> None:
    for depth in range(1, len(key) + 1):
        sources.setdefault(key[:depth], origin)
    sources[key] = origin


# --------------------------------------------------------------------------- error messages


def _explain(exc: ValidationError, sources: dict[Key, str], file: Path | None) -> str:
    lines = []
    for err in exc.errors(include_url=False):
        loc: Key = tuple(err["loc"])
        where = _origin(loc, sources, file)
        dotted = ".".join(str(part) for part in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            hint = _suggest(loc)
            lines.append(f"{where}: unknown key '{dotted}'{hint}")
        else:
            lines.append(f"{where}: '{dotted}': {err['msg']}")
    plural = "s" if len(lines) > 1 else ""
    return f"Invalid configuration ({len(lines)} problem{plural}):\n  " + "\n  ".join(lines)


def _origin(loc: Key, sources: dict[Key, str], file: Path | None) -> str:
    for depth in range(len(loc), 0, -1):
        if loc[:depth] in sources:
            return sources[loc[:depth]]
    return str(file) if file else "configuration"


def _suggest(loc: Key) -> str:
    model: type[BaseModel] | None = AppConfig
    for part in loc[:-1]:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            model = None
            break
        annotation = model.model_fields[part].annotation
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    if model is None:
        return ""
    names = list(model.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), names, n=1)
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f" (known keys: {', '.join(names)})"
