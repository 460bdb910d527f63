"""Development tools: test runners, linters, formatters, builders and package managers. They run the
project's own code or change its files on purpose, so they are `dev` (asked about in the strict modes),
and safe only where they just print a version or a list."""

from __future__ import annotations

from architect_nb.tools.commands import checks
from architect_nb.tools.commands.programs import walks, writes
from architect_nb.tools.commands.programs.model import ProgramModel

__all__ = ["MODELS"]

_ANY: tuple[tuple[str, ...], ...] = ((),)


def _tools(*names: str) -> list[ProgramModel]:
    """Development tools whatever their arguments."""
    return [ProgramModel(name=n, kind="dev", dev=_ANY) for n in names]


def _commands(*words: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(w.split()) for w in words)


def _rewrite(files: tuple[str, ...], *subcommands: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Package managers' subcommands that rewrite the project's manifest and lock files by themselves."""
    return tuple((sub, files) for sub in subcommands)


_NPM_FILES = ("package.json", "package-lock.json")


MODELS: list[ProgramModel] = [
    *_tools("pytest", "py.test", "mypy", "ruff", "black", "isort", "flake8", "pylint", "pyright", "coverage"),
    *_tools("tox", "nox", "make", "mvn", "gradle", "tsc", "eslint", "prettier", "jest", "vitest"),
    ProgramModel(name="pre-commit", kind="dev", dev=_commands("run")),
    ProgramModel(
        name="cargo",
        kind="safe",
        check=checks.exact(("--version",), ("-V",)),
        dev=_commands("build", "test", "check", "clippy", "fmt", "doc", "bench"),
        manifests=_rewrite(("Cargo.toml", "Cargo.lock"), "add", "remove", "update"),
        opens_no_files=True,
    ),
    ProgramModel(
        name="go",
        kind="safe",
        check=checks.exact(("version",)),
        dev=_commands("build", "test", "vet"),
        opens_no_files=True,
    ),
    ProgramModel(
        name="rustc",
        kind="safe",
        check=checks.exact(("--version",), ("-V",)),
        opens_no_files=True,
    ),
    ProgramModel(
        name="npm",
        kind="safe",
        check=checks.exact(("--version",), ("-v",), ("list", "*"), ("ls", "*")),
        dev=_commands("run", "test", "t"),
        manifests=_rewrite(
            _NPM_FILES, "install", "i", "add", "uninstall", "remove", "rm", "update", "version", "pkg"
        ),
        opens_no_files=True,
    ),
    ProgramModel(name="pnpm", kind="dev", dev=_commands("run", "test")),
    ProgramModel(
        name="poetry",
        manifests=_rewrite(("pyproject.toml",), "add", "remove", "version")
        + _rewrite(("poetry.lock",), "lock", "update"),
    ),
    ProgramModel(name="yarn", kind="dev", dev=_commands("run", "test")),
    ProgramModel(
        name="uv",
        kind="safe",
        check=checks.exact(("--version",), ("pip", "list", "*")),
        manifests=_rewrite(("pyproject.toml", "uv.lock"), "add", "remove")
        + _rewrite(("uv.lock",), "lock", "sync"),
        opens_no_files=True,
    ),
    ProgramModel(name="pip", versioned=True, kind="safe", check=checks.check_pip),
    ProgramModel(name="docker", kind="dev", dev=_commands("ps", "images")),
    ProgramModel(name="kubectl", kind="dev", dev=_commands("get", "describe")),
    ProgramModel(
        name="git",
        kind="safe",
        check=checks.check_git,
        writes=writes.git,
        reads=walks.git_reads,
    ),
    ProgramModel(name="jupyter", writes=writes.jupyter),
]
