"""How the guardrails judge commands on the shell's parse (issue 30), beyond the corpus of
`test_protected_writes`: what the sandbox changes, what the refusals advise, that asking git runs none of
the repository's programs, and that names of sensitive files are read as bash sees them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from architect_nb.config.schema import GuardrailsConfig
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.tools.commands.classifier import MAX_COMMAND_CHARS
from tests.support.protected_writes_corpus import _GIT_ENV, PROTECTED, build_workspace


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return build_workspace(Path(os.path.realpath(tmp_path)))


def guard(root: Path, **config: object) -> GuardrailsEngine:
    return GuardrailsEngine(GuardrailsConfig.model_validate({"protected_files": PROTECTED, **config}), root)


@pytest.mark.parametrize(
    "command",
    [
        "rm *.cfg",
        "echo x >> link.toml",
        "python3 -c \"open('pyproject.toml', 'w')\"",
        "tar xf evil.tar",
        "git checkout -q other",
        "find . -name setup.cfg -delete",
        'F=setup.cfg; rm "$F"',
    ],
)
def test_in_the_sandbox_the_unnamed_forms_are_left_to_it(project: Path, command: str) -> None:
    assert not guard(project).check_command(command, project)[0]
    assert guard(project).check_command(command, project, sandboxed=True) == (True, "")


@pytest.mark.parametrize(
    "command",
    [
        "rm setup.cfg",
        "echo x > pyproject.toml",
        "rm -rf .github",
        "rm -r ./",
        "7z a -sdel x.7z setup.cfg",  # the files go once archived
        "rename 's/cfg/old/' setup.cfg",
        "awk -i inplace '{print}' pyproject.toml",  # where awk is gawk
        "script -qc 'rm setup.cfg' /dev/null",
        "script -q -c ls pyproject.toml",  # what it shows is written to that file
    ],
)
def test_a_command_that_names_a_protected_file_is_refused_in_the_sandbox_too(
    project: Path, command: str
) -> None:
    allowed, reason = guard(project).check_command(command, project, sandboxed=True)
    assert not allowed and "protected file" in reason and "Leave it unchanged, or ask the user" in reason


def test_the_refusals_say_what_to_do_instead(project: Path) -> None:
    rails = guard(project)
    _, glob = rails.check_command("rm *.cfg", project)
    assert "the glob '*.cfg' expands to it" in glob and "'setup.cfg'" in glob
    assert "Name the files it should change" in glob and "file tools" in glob and "OS sandbox on" in glob
    _, archive = rails.check_command("tar xf evil.tar", project)
    assert "List the archive first (tar tf, unzip -l)" in archive
    _, code = rails.check_command("python3 -c \"import os; os.remove('setup.cfg')\"", project)
    assert "python code mentions 'setup.cfg'" in code and "use read_file or cat" in code
    _, git = rails.check_command("git checkout -q other", project)
    assert "git checkout other rewrites 'pyproject.toml'" in git
    _, pull = rails.check_command("git pull", project)
    assert "git fetch" in pull


def test_a_hard_link_is_refused_even_in_the_sandbox_without_the_sandbox_sentence(project: Path) -> None:
    allowed, reason = guard(project).check_command("echo x >> hard.cfg", project, sandboxed=True)
    assert not allowed and "another name (a hard link) of 'setup.cfg'" in reason
    assert "OS sandbox on" not in reason


def test_git_is_asked_only_what_runs_none_of_the_repositorys_programs(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    program = f"touch {marker}"
    for key in ("core.fsmonitor", "diff.external", "core.pager", "filter.x.clean", "filter.x.smudge"):
        subprocess.run(["git", "config", key, program], cwd=project, check=True, env=_GIT_ENV)
    (project / ".gitattributes").write_text("* filter=x diff=x\n")
    subprocess.run(["git", "config", "diff.x.textconv", program], cwd=project, check=True, env=_GIT_ENV)
    (project / "pyproject.toml").write_text("[project]\nname = 'edited'\n")  # a local change: worth a look
    (project / ".github" / "workflows" / "extra.yml").write_text("on: pull\n")  # untracked
    rails = guard(project)
    for command in (
        "git checkout -q other",
        "git stash",
        "git reset --hard",
        "git merge other",
        "git clean -f",
    ):
        assert not rails.check_command(command, project)[0], command
    assert not marker.exists()


def test_git_that_leaves_the_protected_files_alone_is_allowed(project: Path) -> None:
    rails = guard(project)
    subprocess.run(["git", "branch", "same"], cwd=project, check=True, env=_GIT_ENV)
    (project / "src" / "app.py").write_text("def main():\n    return 2\n")
    for command in (
        "git checkout -q same",
        "git stash push -- src",
        "git reset --hard",
        "git checkout -b new",
    ):
        assert rails.check_command(command, project) == (True, ""), command


def test_a_stash_is_judged_by_what_it_holds(project: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, env=_GIT_ENV, capture_output=True)

    (project / "src" / "app.py").write_text("def main():\n    return 3\n")
    (project / "src" / "new.py").write_text("Y = 1\n")
    git("stash", "-u")  # a change and an untracked file, neither protected
    assert guard(project).check_command("git stash pop", project) == (True, "")
    git("stash", "pop")
    (project / "setup.cfg").write_text("[metadata]\nname = edited\n")
    git("stash")
    allowed, reason = guard(project).check_command("git stash apply", project)
    assert not allowed and "git stash apply rewrites 'setup.cfg'" in reason


def test_find_reaches_the_files_under_the_folders_it_removes_whole(project: Path) -> None:
    (project / "build" / "pkg").mkdir(parents=True)
    (project / "build" / "pkg" / "setup.cfg").write_text("[x]\n")
    allowed, reason = guard(project).check_command("find . -name build -exec rm -rf {} +", project)
    assert not allowed and "build/pkg/setup.cfg" in reason
    assert guard(project).check_command("find . -name '*.pyc' -exec rm -f {} +", project)[0]


def test_a_command_that_does_not_parse_is_refused_only_where_the_sandbox_does_not_hold(project: Path) -> None:
    allowed, reason = guard(project).check_command("echo 'unbalanced", project)
    assert not allowed and "does not parse as shell" in reason
    assert guard(project).check_command("echo 'unbalanced", project, sandboxed=True)[0]


def test_a_command_too_long_to_check_is_refused(project: Path) -> None:
    allowed, reason = guard(project).check_command("echo " + "x" * MAX_COMMAND_CHARS, project)
    assert not allowed and "too long to check" in reason and "Split it" in reason


def test_without_guarded_files_nothing_is_parsed(project: Path) -> None:
    rails = GuardrailsEngine(GuardrailsConfig(blocked_commands=["sudo"]), project)
    assert rails.check_command("rm *.cfg", project) == (True, "")
    assert rails.check_command("echo 'unbalanced", project) == (True, "")


# ------------------------------------------------------------------ sensitive names, as bash reads them


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    (root / ".env").write_text("KEY=sk-secret\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "prod.txt").write_text("token\n")
    (root / "src").mkdir()
    return root


def sensitive(root: Path) -> GuardrailsEngine:
    return GuardrailsEngine(GuardrailsConfig(sensitive_files=[".env", "secrets/"]), root)


@pytest.mark.parametrize(
    "command",
    [
        "cat '.e'nv",  # quote removal joins the name
        'cat ".e"nv',
        "cat .e\\nv",  # and escape removal
        "bash -c \"cat '.e'nv\"",  # in a nested script too
        "F=.env; cat $F",  # a value given to a variable
        "export F=secrets/prod.txt",
        "cd secrets && cat prod.txt",  # judged from the folder cd goes to
        "python3 - <<'EOF'\nprint(open('.env').read())\nEOF",
    ],
)
def test_a_sensitive_name_is_read_as_bash_sees_it(secrets: Path, command: str) -> None:
    allowed, reason = sensitive(secrets).check_command(command, secrets)
    assert not allowed and "sensitive file" in reason, reason


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn KEY --exclude=.env --exclude-dir=secrets .",
        "rg -g '!.env' -g '!secrets' KEY",
        "find . -type f ! -name .env ! -path './secrets/*' -exec cat {} +",
        "bash -c 'grep -r --exclude=.env --exclude-dir=secrets KEY .'",
        "echo 'the .environment is fine'",
    ],
)
def test_a_name_given_only_to_leave_a_file_out_is_no_mention(secrets: Path, command: str) -> None:
    assert sensitive(secrets).check_command(command, secrets) == (True, "")


def test_rsync_options_are_read_with_the_shared_table(secrets: Path) -> None:
    """`rsync -at` once swallowed the source as the value of `-t` (a flag), so the copy looked harmless."""
    allowed, reason = sensitive(secrets).check_command("rsync -at ./ copied/", secrets)
    assert not allowed and "reads every file under" in reason


def test_code_piped_from_a_computed_echo_is_refused_and_a_project_file_is_not(project: Path) -> None:
    rails = guard(project)
    allowed, reason = rails.check_command('echo "$X" | bash', project)
    assert not allowed and "an echo computes" in reason
    assert rails.check_command("cat Makefile | bash", project)[0]  # a file's text: the project's code
    assert rails.check_command("echo hi | bash", project)[0]


def test_a_patch_or_archive_made_in_the_same_command_is_refused_with_the_way_round(project: Path) -> None:
    allowed, reason = guard(project).check_command("git diff > d.diff && git apply -R d.diff", project)
    assert not allowed and "does not exist yet: make it in one command, and use it in the next" in reason


def test_a_bug_in_a_model_refuses_the_command_instead_of_raising(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from architect_nb.execution.guardrails.writes import protected_writes

    def broken(*_args: object) -> list[object]:
        raise RuntimeError("a model bug")

    monkeypatch.setattr(protected_writes, "effects", broken)
    allowed, reason = guard(project).check_command("ls", project)
    assert not allowed and "could not be checked for sensitive and protected files (RuntimeError)" in reason


def test_the_engine_leaves_unnamed_writes_to_the_sandbox_when_commands_run_in_it(project: Path) -> None:
    """With protected files and no sensitive ones, a command that runs sandboxed is judged as sandboxed (the
    sandbox keeps protected files read-only), and the same command without the sandbox is refused."""
    from architect_nb.config import load_config
    from architect_nb.execution.build import build_engine
    from tests.support.sandbox import require_bwrap

    def engine(mode: str) -> object:
        overrides = {
            "workspace.root": str(project),
            "guardrails.protected_files": PROTECTED,
            "sandbox.mode": mode,
        }
        return build_engine(load_config(overrides=overrides, environ={}), mode="yolo")

    before = (project / "setup.cfg").stat().st_mode
    refused = engine("off").execute_tool_call("run_command", {"command": "chmod 600 *.cfg"})  # type: ignore[attr-defined]
    assert not refused.success and "the glob '*.cfg' expands to it" in (refused.error or "")
    require_bwrap()
    ran = engine("required").execute_tool_call("run_command", {"command": "chmod 600 *.cfg; echo done"})  # type: ignore[attr-defined]
    assert ran.metadata.get("sandboxed") is True and "Guardrail" not in (ran.error or "")
    assert "done" in ran.output  # it ran, and the sandbox kept the protected file's mode
    assert (project / "setup.cfg").stat().st_mode == before


@pytest.mark.parametrize(
    ("command", "removed"),
    [
        ("env -C .github rm -r workflows", ".github/workflows"),
        ("env --chdir=.github rm -r workflows", ".github/workflows"),
        ("env -C.github rm -r workflows", ".github/workflows"),
        # Options before -C: env's own parse (`wrappers`) finds the folder; the guardrails' second parse of
        # env's options stopped at `FOO` and judged `rm -r workflows` in the workspace (issue 50).
        ("env -u FOO -C .github rm -r workflows", ".github/workflows"),
        ("env -i -u FOO --chdir .github rm -r workflows", ".github/workflows"),
        ("echo 'rm setup.cfg' | bash", "setup.cfg"),
        ("echo 'rm setup.cfg' | bash -", "setup.cfg"),
        ("echo 'rm setup.cfg' | bash -e", "setup.cfg"),
        # The value of -o is an option's, not a script: bash still reads the echo (issue 50; the guardrails'
        # own scan of bash's options took `pipefail` for a script file and judged nothing).
        ("echo 'rm setup.cfg' | bash -o pipefail", "setup.cfg"),
        ("echo 'rm setup.cfg' | sh +o errexit", "setup.cfg"),
    ],
)
def test_a_wrapped_command_is_judged_where_and_as_the_wrapper_runs_it(
    project: Path, command: str, removed: str
) -> None:
    """`env -C DIR cmd` runs cmd in DIR; a shell reading an echo runs the echo. The guardrails follow the
    wrappers' own parse, and the command does remove the protected path when bash runs it."""
    allowed, reason = guard(project).check_command(command, project)
    assert not allowed and removed.partition("/")[0] in reason, reason
    subprocess.run(["bash", "-c", command], cwd=project, check=True, env=_GIT_ENV)
    assert not (project / removed).exists()


@pytest.mark.parametrize(
    ("command", "manifest"),
    [
        ("uv add requests", "pyproject.toml"),
        ("uv sync", "uv.lock"),
        ("poetry lock", "poetry.lock"),
        ("npm install left-pad", "package.json"),
        ("cargo add serde", "Cargo.lock"),
    ],
)
def test_package_managers_rewrite_their_manifests(tmp_path: Path, command: str, manifest: str) -> None:
    """What the package managers' models say they rewrite by themselves: refused without the sandbox where
    that file is protected (the command does not name it), left to the sandbox with it."""
    root = Path(os.path.realpath(tmp_path))
    (root / manifest).write_text("x\n")
    rails = GuardrailsEngine(GuardrailsConfig(protected_files=[manifest]), root)
    allowed, reason = rails.check_command(command, root, sandboxed=False)
    assert not allowed and manifest in reason, reason
    assert rails.check_command(command, root, sandboxed=True) == (True, "")
    assert rails.check_command("uv pip list", root, sandboxed=False) == (True, "")
