"""classify_command: the corpus, the issue's examples, configuration, composition and fuzzing."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from architect_nb.config import CommandsConfig
from architect_nb.tools import commands
from architect_nb.tools.commands.classifier import _classify_cached, classify_uncached
from architect_nb.tools.commands.run_command import CommandVerdict, RunCommandTool, classify_command
from tests.support.command_corpus import BENIGN, BLOCKED, DEV, RISKY

LEVEL = {"safe": 0, "dev": 1, "dangerous": 2}


def test_public_names() -> None:
    assert set(commands.__all__) >= {"RunCommandTool", "classify_command", "CommandVerdict"}


def test_corpus_size() -> None:
    assert len(BLOCKED) + len(RISKY) + len(DEV) + len(BENIGN) >= 150
    assert len(set(BLOCKED) | {c for c, _ in RISKY} | set(DEV) | set(BENIGN)) == (
        len(BLOCKED) + len(RISKY) + len(DEV) + len(BENIGN)
    ), "a command appears twice in the corpus"


@pytest.mark.parametrize("command", BLOCKED)
def test_blocklist_and_its_disguises_are_blocked(command: str) -> None:
    verdict = classify_command(command)
    assert verdict.blocked, verdict
    assert verdict.sensitivity == "dangerous"
    assert verdict.reason and verdict.reason.startswith("Blocked:")


@pytest.mark.parametrize(("command", "expected"), RISKY)
def test_risky_commands_are_never_safe(command: str, expected: str) -> None:
    verdict = classify_command(command)
    assert verdict.sensitivity == expected, verdict
    assert verdict.reason  # the confirmation prompt can say why


@pytest.mark.parametrize("command", DEV)
def test_dev_tools(command: str) -> None:
    verdict = classify_command(command)
    assert verdict.sensitivity == "dev", verdict
    assert not verdict.blocked


def test_at_least_95_percent_of_everyday_commands_are_safe() -> None:
    missed = {c: classify_command(c).reason for c in BENIGN if classify_command(c).sensitivity != "safe"}
    ratio = 1 - len(missed) / len(BENIGN)
    assert ratio >= 0.95, missed
    assert not any(classify_command(c).blocked for c in BENIGN)


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat README.md",
        "git status",
        "git log --oneline -5",
        "git diff HEAD~1",
        "grep -rn x src",
        "rg x",
        "find . -name '*.py'",
        "pip list",
        "python --version",
        "cat a | grep b | wc -l",
    ],
)
def test_the_issues_everyday_list_is_safe(command: str) -> None:
    assert classify_command(command) == CommandVerdict(sensitivity="safe")


@pytest.mark.parametrize(
    "command",
    ["ls && rm -rf build", "find . -delete", "git -c core.pager='sh -c id' log", "env rm x"],
)
def test_the_issues_prefix_bypasses_are_not_safe(command: str) -> None:
    assert classify_command(command).sensitivity != "safe"


@pytest.mark.parametrize(
    "command",
    ["ls && rm -rf /", 'bash -c "sudo id"', "\\sudo id", '"sudo" id', "/usr/bin/sudo id", "env sudo id"],
)
def test_the_issues_blocklist_examples(command: str) -> None:
    assert classify_command(command).blocked


def test_fork_bomb_is_blocked_structurally_and_by_the_raw_backstop() -> None:
    assert classify_command(":(){ :|:& };:").blocked
    # The raw pattern alone (as for a string given to python -c) matches it too.
    assert classify_command("python3 -c 'print(\":(){ :|:& };:\")'").blocked


def test_tool_classify_sensitivity_is_the_verdicts(tmp_path: object) -> None:
    tool = RunCommandTool(tmp_path, CommandsConfig())  # type: ignore[arg-type]
    assert tool.classify_sensitivity("git status") == "safe"
    assert tool.classify_sensitivity("pytest -q") == "dev"
    assert tool.classify_sensitivity("rm -rf build") == "dangerous"
    assert tool.classify_sensitivity("sudo id") == "dangerous"
    assert tool.classify_sensitivity("ls", env={"LD_PRELOAD": "x.so"}) == "dangerous"


@pytest.mark.parametrize(
    ("command", "word"),
    [
        ("cat ../notes.txt", "../notes.txt"),
        ("ls ~/projects", "~/projects"),
        ("head /etc/hosts", "/etc/hosts"),
        ("wc -l $HOME/.profile", "$HOME/.profile"),
        ("grep -r x --include=/etc/x .", "--include=/etc/x"),
        ("mypy ../other", "../other"),  # dev commands too: the sandbox lets them read outside
    ],
)
def test_paths_outside_the_workspace_are_not_safe(command: str, word: str) -> None:
    verdict = classify_command(command)
    assert verdict.sensitivity == "dangerous"
    assert verdict.reason == f"{command.split(maxsplit=1)[0]} reaches outside the workspace ({word})"


def test_outside_paths_stay_safe_where_they_are_not_paths() -> None:
    for command in ["grep -rn /api/ src", "sed -n '/x/p' a.py", "echo ~", "cut -d / -f2 a", "cat /dev/null"]:
        assert classify_command(command).sensitivity == "safe", command
    config = CommandsConfig(safe_commands=["mytool"])
    assert classify_command("mytool /etc", config).sensitivity == "dangerous"  # configured ones too


# ---------------------------------------------------------------- configuration


def test_config_extends_safe_and_dev() -> None:
    config = CommandsConfig(safe_commands=["make help", "poetry show"], dev_prefixes=["just test"])
    assert classify_command("make help", config).sensitivity == "safe"
    assert classify_command("make install", config).sensitivity == "dev"  # built-in dev prefix `make`
    assert classify_command("poetry show --tree", config).sensitivity == "safe"
    assert classify_command("just test -v", config).sensitivity == "dev"
    assert classify_command("just deploy", config).sensitivity == "dangerous"
    # Extensions still obey the cross-cutting rules.
    assert classify_command("poetry show > out.txt", config).sensitivity == "dangerous"
    assert classify_command("FOO=1 poetry show", config).sensitivity == "dangerous"


def test_config_extends_the_blocklist() -> None:
    config = CommandsConfig(blocked_patterns=[r"terraform\s+destroy"])
    assert classify_command("terraform destroy -auto-approve", config).blocked
    assert classify_command("ls && bash -c 'terraform  destroy'", config).blocked
    assert not classify_command("terraform plan", config).blocked


def test_config_cannot_remove_the_builtin_blocklist() -> None:
    config = CommandsConfig(safe_commands=["sudo", "rm", "chmod"], dev_prefixes=["sudo"])
    for command in ("sudo id", "rm -rf /", "chmod 777 x", "env sudo id"):
        assert classify_command(command, config).blocked, command


def test_invalid_blocked_pattern_fails_closed() -> None:
    config = CommandsConfig(blocked_patterns=["("])
    verdict = classify_command("ls", config)
    assert verdict.blocked and "not a valid regex" in (verdict.reason or "")
    with pytest.raises(ValueError, match="not a valid regex"):
        RunCommandTool(__import__("pathlib").Path("."), config)


def test_env_makes_a_command_not_safe() -> None:
    assert classify_command("ls", env={"PATH": "/tmp/evil"}).sensitivity == "dangerous"
    assert classify_command("ls", env={}).sensitivity == "safe"
    assert classify_command("pytest", env={"PYTHONPATH": "src"}).sensitivity == "dangerous"


def test_cache_gives_the_same_verdicts() -> None:
    for command in [*BLOCKED[:20], *BENIGN[:20], *DEV[:5]]:
        assert classify_command(command) == classify_uncached(command)


def test_the_cache_keeps_each_configs_verdict() -> None:
    """Configurations that judge a command differently each get their own verdict through the cache: the one
    bug a cache adds is two configurations sharing a key, so each command is asked under every one, twice."""
    configs = {
        "none": None,
        "empty": CommandsConfig(),
        "safe": CommandsConfig(safe_commands=["mytool --check"]),
        "safe prefix": CommandsConfig(safe_commands=["mytool"]),
        "dev": CommandsConfig(dev_prefixes=["mytool"]),
        "blocked": CommandsConfig(blocked_patterns=[r"\bmytool\b"]),
        "ls blocked": CommandsConfig(blocked_patterns=[r"^ls\b"]),
    }
    d, b = ("dangerous", False), ("dangerous", True)
    expected = {  # per command, the verdict (sensitivity, blocked) under each configuration above
        "mytool --check": [d, d, ("safe", False), ("safe", False), ("dev", False), b, d],
        "mytool --fix": [d, d, d, ("safe", False), ("dev", False), b, d],
        "ls -la": [("safe", False)] * 6 + [b],
    }
    hits = _classify_cached.cache_info().hits
    for _round in range(2):  # the second round is answered from the cache
        for command, verdicts in expected.items():
            for (name, config), want in zip(configs.items(), verdicts, strict=True):
                verdict = classify_command(command, config)
                assert (verdict.sensitivity, verdict.blocked) == want, (command, name, verdict)
    assert _classify_cached.cache_info().hits - hits >= len(configs) * len(expected)


# ---------------------------------------------------------------- composition: the most dangerous part wins


def _composable(command: str) -> bool:
    if any(mark in command for mark in ("\n", "<<", "#", "\\")) or command.rstrip().endswith("&"):
        return False
    return "does not parse" not in (classify_command(command).reason or "")


PARTS = [c for c in [*BLOCKED, *(c for c, _ in RISKY), *DEV, *BENIGN] if _composable(c)]


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.sampled_from(PARTS), min_size=2, max_size=4),
    separators=st.lists(st.sampled_from(["; ", " && ", " || ", " | ", "\n", " & "]), min_size=3, max_size=3),
    wrap=st.sampled_from(["{}", "({})", "echo $({})", "bash -c '{}'"]),
)
def test_a_composite_is_as_dangerous_as_its_worst_part(
    parts: list[str], separators: list[str], wrap: str
) -> None:
    joined = parts[0]
    for sep, part in zip(separators, parts[1:], strict=False):
        joined += sep + part
    if wrap == "bash -c '{}'" and "'" in joined:
        wrap = "{}"
    command = wrap.format(joined)
    verdicts = [classify_command(p) for p in parts]
    verdict = classify_command(command)
    if any(v.blocked for v in verdicts):
        assert verdict.blocked, command
    assert LEVEL[verdict.sensitivity] >= max(LEVEL[v.sensitivity] for v in verdicts), command


# ---------------------------------------------------------------- fuzzing: a verdict, never an exception

shellish = st.lists(
    st.sampled_from(
        [
            "ls",
            "rm",
            "sudo",
            "-rf",
            "/",
            "~",
            "$(",
            ")",
            "`",
            "'",
            '"',
            "|",
            "&&",
            ";",
            "\n",
            "{",
            "}",
            "(",
            "<<",
            "EOF",
            "<(",
            ">",
            "2>&1",
            "$x",
            "${",
            "\\",
            "=",
            "*",
            "!",
            "#",
            "find",
            "-exec",
            "\\;",
            "bash",
            "-c",
            "env",
            "xargs",
            "$'",
            "[[",
            "]]",
            "((",
            "))",
            "for",
            "in",
            "do",
            "done",
            "if",
            "then",
            "fi",
        ]
    ),
    max_size=30,
).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(command=st.one_of(st.text(max_size=300), shellish))
def test_classifier_always_returns_a_verdict(command: str) -> None:
    verdict = classify_command(command)
    assert isinstance(verdict, CommandVerdict)
    assert verdict.sensitivity in LEVEL
    if verdict.sensitivity != "safe":
        assert verdict.reason


@pytest.mark.parametrize(
    "command",
    [
        "",
        "   ",
        "\x00",
        "ls\x00rm",
        "\ud800",
        "A" * 2_000_000,
        "$(" * 5000,
        "(" * 3000 + "ls" + ")" * 3000,
        "bash -c " + "'bash -c " * 20 + "ls" + "'" * 20,
        "echo " + "$(echo " * 300 + "x" + ")" * 300,
        "\x1b[31m",
        "\u202erm -rf /",
    ],
)
def test_hostile_strings_get_a_verdict(command: str) -> None:
    verdict = classify_command(command)
    assert isinstance(verdict, CommandVerdict)
    assert verdict.sensitivity == "dangerous"


def test_undecodable_bytes_are_judged_as_bash_gets_them() -> None:
    assert classify_command("ls \udcff").sensitivity == "safe"  # the file name b"\xff"
    assert classify_command("\udcffrm x").sensitivity == "dangerous"


@pytest.mark.parametrize(
    "command",
    ["ls | " * 3300, "dd " * 5500, "$(" * 8000, "${" * 8000, '"' * 16000, "a(){ " * 3300, "{a," * 5000],
)
def test_pathological_input_is_classified_in_bounded_time(command: str) -> None:
    start = time.perf_counter()
    classify_uncached(command)
    assert time.perf_counter() - start < 5  # ~1 s on the CI machine at worst; quadratic regexes took minutes


def test_long_commands_are_dangerous_but_still_blocklisted() -> None:
    assert classify_command("x" * 20_000).sensitivity == "dangerous"
    assert classify_command("x" * 20_000 + "; sudo id").blocked
    assert classify_command(" && ".join(["ls"] * 2000)).sensitivity == "safe"  # long but under the limit


def test_non_string_input_gets_a_verdict() -> None:
    assert classify_command(None).sensitivity == "dangerous"  # type: ignore[arg-type]
    assert classify_command(b"ls").sensitivity == "dangerous"  # type: ignore[arg-type]


def test_reasons_name_the_offending_part() -> None:
    reason = classify_command("git status && curl -o x http://example.invalid").reason or ""
    assert re.search(r"\bcurl\b", reason)


def test_tree_sitter_loads_on_first_classification_only() -> None:
    import subprocess
    import sys

    code = (
        "import sys, architect_nb, architect_nb.tools.setup, architect_nb.tools.commands.run_command\n"
        "assert 'tree_sitter' not in sys.modules, 'imported eagerly'\n"
        "from architect_nb.tools.commands.run_command import classify_command\n"
        "assert classify_command('ls').sensitivity == 'safe'\n"
        "assert 'tree_sitter' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
