from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from architect_nb.config import AppConfig, CommandsConfig, ConfigError, WorkspaceConfig, load_config


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # stop the search for a config file here
    config = load_config(environ={}, search_from=tmp_path)
    assert config.workspace.allow_delete is False
    assert config.commands == CommandsConfig()
    assert config.guardrails.active is False
    assert config.workspace.root == Path.cwd().resolve()


def test_yaml_is_read_and_workspace_is_relative_to_the_file(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / ".architect.yaml",
        "workspace:\n  root: src\n  allow_delete: true\ncommands:\n  default_timeout: 5\n"
        "hooks:\n  post_tool_use:\n    - {name: lint, command: 'ruff check {file}', async: true}\n",
    )
    config = load_config(cfg, environ={})
    assert config.workspace.root == (tmp_path / "src").resolve()
    assert config.workspace.allow_delete is True
    assert config.commands.default_timeout == 5
    assert config.hooks.post_tool_use[0].async_ is True


def test_config_file_is_found_in_parent_folders(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".architect.yaml", "llm:\n  model: from-file\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert load_config(environ={}, search_from=deep).llm.model == "from-file"


def test_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path / ".architect.yaml", "llm:\n  model: outside-repo\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert load_config(environ={}, search_from=repo).llm.model != "outside-repo"


def test_precedence_yaml_then_env_then_arguments(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "llm:\n  model: yaml-model\n  timeout: 10\ncommands:\n  enabled: true\n")
    env = {
        "ARCHITECT_MODEL": "env-model",
        "ARCHITECT_COMMANDS__ENABLED": "false",
        "ARCHITECT_LLM__TIMEOUT": "20",
    }
    config = load_config(cfg, environ=env)
    assert (config.llm.model, config.commands.enabled, config.llm.timeout) == ("env-model", False, 20)
    config = load_config(cfg, {"llm.model": "arg-model", "llm": {"timeout": 30}}, environ=env)
    assert (config.llm.model, config.llm.timeout) == ("arg-model", 30)


def test_unrelated_architect_variables_are_ignored(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "")
    config = load_config(cfg, environ={"ARCHITECT_TOOL_NAME": "write_file", "ARCHITECT_EVENT": "x"})
    assert config == load_config(cfg, environ={})


def test_unknown_key_names_key_file_and_line_with_a_suggestion(tmp_path: Path) -> None:
    cfg = write(tmp_path / ".architect.yaml", "workspace:\n  root: .\n  alow_delete: true\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg, environ={})
    message = str(info.value)
    assert f"{cfg}:3" in message
    assert "unknown key 'workspace.alow_delete'" in message
    assert "did you mean 'allow_delete'" in message


def test_unknown_section_and_bad_value_in_a_list(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "c.yaml",
        "guardrails:\n  code_rules:\n    - pattern: x\n      message: m\n      severity: fatal\n"
        "llmm:\n  model: x\n",
    )
    with pytest.raises(ConfigError) as info:
        load_config(cfg, environ={})
    message = str(info.value)
    assert "2 problems" in message
    assert f"{cfg}:5: 'guardrails.code_rules.0.severity'" in message
    assert f"{cfg}:6: unknown key 'llmm' (did you mean 'llm'?)" in message


def test_mistyped_value(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "commands:\n  default_timeout: forever\n")
    with pytest.raises(
        ConfigError, match=r"c.yaml:2: 'commands.default_timeout': Input should be a valid integer"
    ):
        load_config(cfg, environ={})


def test_bad_environment_variable_is_named(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "")
    with pytest.raises(ConfigError, match=r"environment variable ARCHITECT_LLM__MODLE.*did you mean 'model'"):
        load_config(cfg, environ={"ARCHITECT_LLM__MODLE": "x"})


def test_bad_argument_is_named(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.yaml", "")
    with pytest.raises(ConfigError, match=r"argument commands.default_timeout"):
        load_config(cfg, {"commands.default_timeout": 0}, environ={})


def test_duplicate_keys_and_broken_yaml(tmp_path: Path) -> None:
    dup = write(tmp_path / "dup.yaml", "llm:\n  model: a\n  model: b\n")
    with pytest.raises(ConfigError, match=r"dup.yaml:3: key 'model' is repeated"):
        load_config(dup, environ={})
    broken = write(tmp_path / "broken.yaml", "llm: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(broken, environ={})
    scalar = write(tmp_path / "scalar.yaml", "just a string\n")
    with pytest.raises(ConfigError, match="mapping of sections"):
        load_config(scalar, environ={})


def test_missing_explicit_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml", environ={})


def test_guardrails_become_active_when_a_rule_is_set() -> None:
    config = AppConfig.model_validate({"guardrails": {"protected_files": ["data/raw/*"]}})
    assert config.guardrails.active
    assert not AppConfig.model_validate(
        {"guardrails": {"protected_files": ["x"], "enabled": False}}
    ).guardrails.active


def test_reference_implementation_keys_land_where_they_belong() -> None:
    """Each key the reference implementation's files use sets the field of that name (every value differs
    from the default, so one dropped or read into another field shows)."""
    reference: dict[str, Any] = {
        "llm": {
            "model": "m",
            "api_base": "http://x",
            "api_key_env": "K",
            "timeout": 5,
            "retries": 1,
            "stream": False,
        },
        "agents": {
            "mine": {
                "system_prompt": "p",
                "allowed_tools": ["read_file"],
                "confirm_mode": "yolo",
                "max_steps": 3,
            }
        },
        "costs": {"budget_usd": 1.0, "warn_at_usd": 0.5},
        "hooks": {"post_edit": [{"name": "lint", "command": "ruff check {file}", "file_patterns": ["*.py"]}]},
        "mcp": {"servers": [{"name": "git", "command": "mcp-server-git", "args": ["--repository", "."]}]},
    }
    config = AppConfig.model_validate(reference)
    defaults = AppConfig()
    for section in ("llm", "costs"):
        given = reference[section]
        assert getattr(config, section).model_dump(include=set(given)) == given, section
        assert getattr(defaults, section).model_dump(include=set(given)) != given, section
    assert list(config.agents) == ["mine"]
    mine = reference["agents"]["mine"]
    assert config.agents["mine"].model_dump(include=set(mine)) == mine
    (lint,) = config.hooks.post_edit
    assert lint.model_dump(include={"name", "command", "file_patterns"}) == reference["hooks"]["post_edit"][0]
    assert config.hooks.post_tool_use == []  # post_edit stays its own list; the hook executor joins them
    (git,) = config.mcp.servers
    assert git.model_dump(include={"name", "command", "args"}) == reference["mcp"]["servers"][0]


def test_workspace_config_keeps_the_documented_signature(tmp_path: Path) -> None:
    config = WorkspaceConfig(root=tmp_path, allow_delete=True)
    assert (config.root, config.allow_delete) == (tmp_path, True)
    assert WorkspaceConfig(root=tmp_path).allow_delete is False  # deleting is off unless asked for
