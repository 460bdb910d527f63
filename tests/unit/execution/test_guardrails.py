"""GuardrailsEngine: protected and sensitive files, commands, limits, code rules and quality gates."""

from __future__ import annotations

from pathlib import Path

import pytest

from architect_nb.config.schema import GuardrailsConfig
from architect_nb.execution.guardrails.rails import GuardrailsEngine


def rails(workspace: Path, **config: object) -> GuardrailsEngine:
    return GuardrailsEngine(GuardrailsConfig.model_validate(config), workspace)


@pytest.fixture
def guard(workspace: Path) -> GuardrailsEngine:
    return rails(
        workspace,
        protected_files=["data/raw/*", ".git/*", "uv.lock"],
        sensitive_files=[".env", "*.pem", "id_rsa", "secrets/"],
        blocked_commands=["git push", r"rm\s+-rf\s+/tmp"],
    )


@pytest.mark.parametrize(
    ("path", "write", "allowed"),
    [
        ("src/app.py", True, True),
        ("data/raw/a.csv", True, False),
        ("data/raw/deep/a.csv", True, False),
        ("data/raw/a.csv", False, True),  # protected files may be read
        (".git/config", True, False),
        ("sub/uv.lock", True, False),  # a pattern without '/' matches the name anywhere
        (".env", False, False),
        ("app/.ENV", False, False),  # case is ignored: over-matching is the safe mistake
        ("keys/server.pem", False, False),
        ("home/id_rsa", True, False),
        ("secrets/token.txt", False, False),  # a folder pattern covers what is inside
        (".envrc", False, True),
        ("id_rsa.pub", False, True),
    ],
)
def test_file_access(guard: GuardrailsEngine, workspace: Path, path: str, write: bool, allowed: bool) -> None:
    ok, reason = guard.check_file_access(
        workspace / path, "write_file" if write else "read_file", write=write
    )
    assert ok is allowed
    if not allowed:
        assert reason.endswith(".") and path.lower() in reason.lower()


@pytest.mark.parametrize(
    ("command", "allowed", "fragment"),
    [
        ("ls -la", True, ""),
        ("git status", True, ""),
        ("git push origin main", False, "blocked pattern 'git push'"),
        ("rm  -rf /tmp/x", False, "blocked pattern"),
        ("cat .env", False, "'.env', a sensitive file"),
        ("cat ./config/../.env", False, "sensitive file"),
        ("grep KEY .env", False, "sensitive file"),
        ("python -c \"print(open('.env').read())\"", False, "sensitive file"),
        ("docker run --env-file=.env app", False, "sensitive file"),
        ("openssl x509 -in certs/server.pem", False, "sensitive file"),
        ("cat ~/.ssh/id_rsa", False, "sensitive file"),
        ("python -m venv .venv", True, ""),
        ("source .venv/bin/activate && pytest", True, ""),
        ("echo x > data/raw/a.csv", False, "protected file"),
        ("echo x >> data/raw/a.csv", False, "protected file"),
        ("echo x 2>data/raw/log", False, "protected file"),
        ("echo x | tee -a data/raw/a.csv", False, "protected file"),
        ("sed -i s/a/b/ uv.lock", False, "protected file"),
        ("rm data/raw/a.csv", False, "protected file"),
        ("mv data/raw/a.csv b.csv", False, "protected file"),
        ("rm -rf data", False, "protected file"),  # a folder holding protected files
        ("mv data/raw old", False, "protected file"),
        ("rm -r ./", False, "protected file"),
        ("rm -rf build", True, ""),
        ("cp data/raw/a.csv work/a.csv", True, ""),  # reading a protected file is fine
        ("cp work/a.csv data/raw/a.csv", False, "protected file"),
        ("cat data/raw/a.csv > work/a.csv", True, ""),
        ("echo 'a > b' && cat uv.lock", True, ""),
        ("echo 'unbalanced", False, "does not parse as shell"),  # what bash would run cannot be told
    ],
)
def test_commands(guard: GuardrailsEngine, command: str, allowed: bool, fragment: str) -> None:
    ok, reason = guard.check_command(command)
    assert ok is allowed, reason
    assert fragment in reason


def test_commands_are_judged_from_their_cwd(guard: GuardrailsEngine, workspace: Path) -> None:
    assert not guard.check_command("echo x > a.csv", workspace / "data" / "raw")[0]
    assert guard.check_command("echo x > a.csv", workspace / "src")[0]


def test_command_limit(workspace: Path) -> None:
    guard = rails(workspace, max_commands_executed=1)
    assert guard.check_command("ls")[0]
    guard.record_command()
    ok, reason = guard.check_command("ls")
    assert not ok and "limit (guardrails.max_commands_executed = 1)" in reason
    guard.reset()
    assert guard.check_command("ls")[0]


def test_edit_limits(workspace: Path) -> None:
    guard = rails(workspace, max_files_modified=1, max_lines_changed=10)
    assert guard.check_edit_limits(workspace / "a.py", 4, 4)[0]
    guard.record_edit(workspace / "a.py", 4, 4)
    assert guard.check_edit_limits(workspace / "a.py", 1, 1)[0]  # the same file again
    ok, reason = guard.check_edit_limits(workspace / "a.py", 2, 1)
    assert not ok and "touches 3 lines and the run has changed 8" in reason
    ok, reason = guard.check_edit_limits(workspace / "b.py", 0, 0)
    assert not ok and "'b.py' would be one more" in reason


def test_code_rules(workspace: Path) -> None:
    guard = rails(
        workspace,
        code_rules=[
            {"pattern": r"eval\(", "message": "no eval", "severity": "block"},
            {"pattern": "TODO", "message": "resolve TODOs", "severity": "warn"},
            {"pattern": "(unclosed", "message": "literal text works too"},
        ],
    )
    hits = guard.check_code_rules("x = eval(y)  # TODO (unclosed")
    assert [(h.severity, h.message) for h in hits] == [
        ("block", "no eval"),
        ("warn", "resolve TODOs"),
        ("warn", "literal text works too"),
    ]
    assert guard.check_code_rules("x = 1") == []


def test_filter_output(guard: GuardrailsEngine) -> None:
    text = "a.py:1:x\n.env:3:SECRET=1\nkeys/k.pem-4-ctx\nb.py-2-y\n"
    filtered, withheld = guard.filter_output(text)
    assert withheld == 2
    assert filtered == "a.py:1:x\nb.py-2-y\n[guardrails: 2 line(s) from sensitive files withheld]"
    assert guard.filter_output("nothing to see") == ("nothing to see", 0)


def test_filter_output_withholds_notebook_hits(guard: GuardrailsEngine) -> None:
    """Search tools report notebook matches by cell; those lines from a sensitive notebook go too."""
    text = (
        "secrets/keys.ipynb [cell 0, line 1]: key = 'nb-secret'\n"
        "secrets/keys.ipynb [cell 0, line 2]- print(key)\n"
        "secrets/keys.ipynb [cell 1, output 0, line 1]: nb-secret\n"
        "open.ipynb [cell 2, line 5]: fine\n"
    )
    filtered, withheld = guard.filter_output(text)
    assert withheld == 3 and "nb-secret" not in filtered
    assert filtered.startswith("open.ipynb [cell 2, line 5]: fine\n")


def test_search_tools_withhold_a_sensitive_notebook_through_the_engine(workspace: Path) -> None:
    import nbformat

    from architect_nb.config import load_config
    from architect_nb.execution.build import build_engine

    (workspace / "conf").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('key = "nb-SECRETVALUE"\nprint(key)')]
    nbformat.write(nb, str(workspace / "conf" / "keys.ipynb"))
    (workspace / "conf" / "secret.py").write_text('TOKEN = "py-SECRETVALUE"\n')
    (workspace / "open.py").write_text("# SECRETVALUE is a word here\n")
    overrides = {"workspace.root": str(workspace), "guardrails.sensitive_files": ["conf/*"]}
    engine = build_engine(load_config(overrides=overrides, environ={}), mode="yolo")
    for tool, args in [
        ("grep", {"pattern": "SECRETVALUE"}),
        ("search_code", {"pattern": "SECRETVALUE", "context_lines": 2}),
    ]:
        result = engine.execute_tool_call(tool, args)
        assert result.success, result.error
        assert "nb-SECRETVALUE" not in result.output and "print(key)" not in result.output, tool
        assert "py-SECRETVALUE" not in result.output and "open.py" in result.output, tool
        assert "withheld" in result.output


def test_active_defaults(workspace: Path) -> None:
    assert not GuardrailsConfig().active
    assert GuardrailsConfig(max_lines_changed=5).active
    assert not GuardrailsConfig(enabled=False, protected_files=["x"]).active
