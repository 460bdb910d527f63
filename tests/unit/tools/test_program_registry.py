"""The registry of program models (issue 50): every check reads it, so a program added there is known to
the classifier, the protected-file check and the unnamed-read check at once."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from architect_nb.config.schema import GuardrailsConfig
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.tools.commands import checks, rules, wrappers
from architect_nb.tools.commands.classifier import _classify_cached
from architect_nb.tools.commands.programs import walks, writes
from architect_nb.tools.commands.programs.model import ProgramModel, Spec, Wrapping
from architect_nb.tools.commands.programs.registry import FAMILIES, extended, model_of, models
from architect_nb.tools.commands.run_command import classify_command

#: A made-up program: reads its operands, writes the file given to -o, shows only names with -l.
FROB = ProgramModel(
    name="frob",
    kind="safe",
    check=checks.forbid("-o", "--output", reason="frob -o writes a file"),
    options=Spec("o", frozenset({"--output"})),
    writes=writes.option_targets("writes", ("-o", "--output")),
    names_only=True,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    (root / "pyproject.toml").write_text("[project]\n")
    (root / ".env").write_text("API_KEY=not-a-real-key\n")
    (root / "notes.txt").write_text("a\n")
    return root


@pytest.fixture
def rails(workspace: Path) -> GuardrailsEngine:
    config = GuardrailsConfig(protected_files=["pyproject.toml"], sensitive_files=[".env"])
    return GuardrailsEngine(config, workspace)


@pytest.fixture
def frob() -> Iterator[None]:
    _classify_cached.cache_clear()  # verdicts cached before the model was added
    with extended(FROB):
        yield
    _classify_cached.cache_clear()


def verdicts(rails: GuardrailsEngine) -> tuple[str, str, bool, bool]:
    """The three checks' answers about frob: plain use, -o, a write of a protected file, a glob read."""
    return (
        classify_command("frob notes.txt").sensitivity,
        classify_command("frob -o out.txt notes.txt").sensitivity,
        rails.check_command("frob -o pyproject.toml notes.txt", sandboxed=True)[0],
        rails.check_command("frob .e*", sandboxed=False)[0],
    )


def test_a_program_added_to_the_registry_is_seen_by_all_three_checks(rails: GuardrailsEngine) -> None:
    # Without a model: not safe, its writes unknown to the protected check (the sandbox's job), and a glob
    # that reaches .env is a read of it.
    assert verdicts(rails) == ("dangerous", "dangerous", True, False)
    _classify_cached.cache_clear()
    with extended(FROB):
        assert model_of("frob") is FROB
        # With one: safe to read, not with -o; -o pyproject.toml refused even in the sandbox (named); a glob
        # is harmless to a program that shows only names.
        assert verdicts(rails) == ("safe", "dangerous", False, True)
    _classify_cached.cache_clear()
    assert model_of("frob") is None
    assert verdicts(rails) == ("dangerous", "dangerous", True, False)


def test_an_added_model_replaces_a_declared_one_and_goes_away_after(frob: None) -> None:
    cat = model_of("cat")
    assert cat is not None and cat.kind == "safe"
    with extended(ProgramModel(name="cat")):
        _classify_cached.cache_clear()
        assert classify_command("cat notes.txt").sensitivity == "dangerous"
    _classify_cached.cache_clear()
    assert model_of("cat") is cat and model_of("frob") is FROB
    assert classify_command("cat notes.txt").sensitivity == "safe"


def test_every_family_declares_well_formed_models() -> None:
    families = [importlib.import_module(f"architect_nb.tools.commands.programs.{f}") for f in FAMILIES]
    declared = [m for family in families for m in family.MODELS]
    names = [m.name for m in declared]
    assert len(names) == len(set(names)) == len(models())
    for model in declared:
        assert model.check is None or model.kind == "safe", model.name
        assert (model.kind == "dev") <= bool(model.dev), model.name  # a dev tool says which commands
        assert all(words and all(words) for words in model.dev if words != ()), model.name
        assert not (model.is_shell and not model.runs_code), model.name


def test_the_counts_the_issue_started_from() -> None:
    """90 safe programs, 51 development prefixes, 8 shells, 8 printers: the old tables, now in the models."""
    every = models().values()
    dev_prefixes = [(m.name, *words) for m in every for words in m.dev]
    assert len([m for m in every if m.kind == "safe"]) == 90
    assert len(dev_prefixes) == 51
    assert {m.name for m in every if m.is_shell} == {
        "bash",
        "sh",
        "dash",
        "zsh",
        "ksh",
        "mksh",
        "ash",
        "rbash",
    }
    assert {m.name for m in every if m.printer} == {
        "echo",
        "printf",
        "true",
        "false",
        "test",
        "[",
        "basename",
        "dirname",
    }
    python = model_of("python")
    assert python is not None and ("python", "-m", "pytest") in dev_prefixes
    pypy = model_of("pypy")
    assert pypy is not None and pypy.kind is None and pypy.check is None  # pypy does not get python's check


def test_a_name_modelled_twice_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.tools.commands.programs import readers, registry

    monkeypatch.setattr(readers, "MODELS", [*readers.MODELS, ProgramModel(name="rm")])
    registry._declared.cache_clear()
    try:
        with pytest.raises(ValueError, match="'rm' is modelled twice"):
            registry.models()
    finally:
        monkeypatch.undo()
        registry._declared.cache_clear()
    assert model_of("rm") is not None


def test_a_versioned_name_is_its_program_only_where_the_model_says_so() -> None:
    python, pypy, pip = model_of("python"), model_of("pypy"), model_of("pip")
    assert model_of("python3") is python and model_of("python3.12") is python
    assert model_of("pypy3") is pypy and pypy is not python  # pypy never gets python's check
    assert model_of("pip3") is pip and rules.program_key("pip3.11") == "pip"
    assert model_of("perl5.36") is None  # perl's model does not claim its versions
    assert model_of("ls2") is None and model_of("") is None and model_of("7") is None
    assert rules.program_key("python3.12") == "python" and rules.program_key("mytool2") == "mytool2"
    assert classify_command("python3.12 --version").sensitivity == "safe"
    assert classify_command("pypy3 --version").sensitivity == "dangerous"


def test_an_added_wrapper_is_followed_by_the_classifier_and_the_guardrails(rails: GuardrailsEngine) -> None:
    def answers() -> tuple[str, bool]:
        _classify_cached.cache_clear()
        return (
            classify_command("frobwrap -q cat notes.txt").sensitivity,
            rails.check_command("frobwrap -q rm pyproject.toml", sandboxed=True)[0],
        )

    # Unknown: not safe; the guardrails guess that it may run the rm among its words (shell_runs._may_run).
    assert answers() == ("dangerous", False)
    with extended(ProgramModel(name="frobwrap", wraps=Wrapping(frozenset({"-q"})))):
        assert answers() == ("safe", False)  # the command after its options is judged as if alone
    assert answers() == ("dangerous", False)


def test_an_added_lister_is_judged_by_its_walk_where_a_write_takes_its_output(workspace: Path) -> None:
    """`rm $(LISTER ...)`: the protected-file check trusts what a lister prints only where its model says how
    it walks (`lists`); any other program's output is unknown, and refused without the sandbox."""
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_text("a\n")
    rails = GuardrailsEngine(GuardrailsConfig(protected_files=["pyproject.toml"]), workspace)

    def answers() -> tuple[str, str]:
        return rails.check_command("rm $(frobls docs)")[1], rails.check_command("rm $(frobls .)")[1]

    unknown = "the names come from frobls, whose output cannot be known beforehand"
    assert all(unknown in reason for reason in answers())
    with extended(ProgramModel(name="frobls", lists=walks.ls_lists)):
        allowed, refused = answers()
        assert allowed == ""
        assert "removes what frobls lists, including 'pyproject.toml'" in refused
    assert all(unknown in reason for reason in answers())
    # zgrep's model lists (grep's walk): a search of docs/ reaches no protected file.
    assert rails.check_command("rm $(zgrep -rl a docs)") == (True, "")
    assert (
        "removes what zgrep lists, including 'pyproject.toml'"
        in rails.check_command("rm $(zgrep -rl a .)")[1]
    )


def test_a_program_that_runs_its_arguments_is_followed_by_its_model(rails: GuardrailsEngine) -> None:
    """`unwraps`: a model says what a program runs (here as busybox does: its arguments are the command), and
    the classifier and the guardrails follow it with no name of it written anywhere else."""

    def answers() -> tuple[str, bool]:
        _classify_cached.cache_clear()
        return (
            classify_command("frobrun cat notes.txt").sensitivity,
            rails.check_command("frobrun rm pyproject.toml", sandboxed=True)[0],
        )

    assert answers() == ("dangerous", False)  # the guardrails' guess (shell_runs._may_run)
    with extended(ProgramModel(name="frobrun", unwraps=wrappers.busybox)):
        assert answers() == ("safe", False)
    assert answers() == ("dangerous", False)


def test_what_a_program_does_to_the_shell_is_its_models_word(workspace: Path) -> None:
    """A program that moves the shell (`cd`) or prints its arguments as text (`echo`) says so in its model;
    the guardrails then judge later paths from the new folder and an echo piped into a shell as its code."""
    (workspace / "sub").mkdir()
    rails = GuardrailsEngine(GuardrailsConfig(protected_files=["pyproject.toml"]), workspace)
    commands = ["frobcd sub && rm ../pyproject.toml", "frobecho 'rm pyproject.toml' | bash"]
    # Unknown programs: `../pyproject.toml` is judged from the workspace (outside it), and what bash reads is
    # the output of a program nobody knows (the sandbox's job).
    assert [rails.check_command(c, sandboxed=True)[0] for c in commands] == [True, True]
    with extended(ProgramModel(name="frobcd", moves_shell=True), ProgramModel(name="frobecho", echoes=True)):
        for command in commands:
            allowed, reason = rails.check_command(command, sandboxed=True)
            assert not allowed and "removes 'pyproject.toml', which is or holds a protected file" in reason
    assert model_of("cd") == ProgramModel(name="cd", kind="safe", moves_shell=True)
    assert {m.name for m in models().values() if m.echoes} == {"echo", "printf"}


def test_find_execdir_runs_its_commands_in_folders_only_known_at_run_time(
    workspace: Path, rails: GuardrailsEngine
) -> None:
    """find's reader says `-execdir` runs each command in the found file's folder (`elsewhere`): a relative
    path there cannot be judged from the workspace, so without the sandbox it is refused."""
    (workspace / "sub").mkdir()
    execdir = "find sub -name x -execdir rm ../pyproject.toml \\;"
    allowed, reason = rails.check_command(execdir)
    assert not allowed and "'../pyproject.toml' is relative to a folder a cd chose at run time" in reason
    assert rails.check_command(execdir, sandboxed=True) == (True, "")
    assert rails.check_command(execdir.replace("-execdir", "-exec")) == (True, "")  # run from here: outside
