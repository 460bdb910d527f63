"""The programs that run code: shells and the builtins that change the shell, interpreters, stream editors
and text editors. A shell's `-c` string is judged as commands; other inline code by what it names
(`interpreters`)."""

from __future__ import annotations

from architect_nb.tools.commands import checks, wrappers
from architect_nb.tools.commands.programs import interpreters, walks, writes
from architect_nb.tools.commands.programs.effects import Change, Effect, Stdin
from architect_nb.tools.commands.programs.model import ProgramModel, Spec, Wrapping, alike, frozen
from architect_nb.tools.commands.programs.options import literal, program_options
from architect_nb.tools.commands.shell_words import Word

__all__ = ["MODELS"]


def _python(_program: str, args: list[Word], stdin: Stdin, _fed: bool) -> list[Effect]:
    return interpreters.python(args, stdin)


def _script_logs(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    """`script [FILE]` writes what the shell shows to FILE (`typescript`), and its -T/-I/-O/-B logs."""
    opts = program_options(program, args)
    logs = (opts.operands[:1] or [literal("typescript")]) + opts.of(*_SCRIPT_LOGS)
    return [Change(w, "writes") for w in logs]


_NO_SET = frozenset[str]()
#: Programs that run the command after their options.
_WRAPPERS = {
    "nice": Wrapping(frozen("-10", "-5", "-19"), frozen("-n"), frozen("--adjustment")),
    "nohup": Wrapping(),
    "timeout": Wrapping(
        frozen("--foreground", "--preserve-status", "-v", "--verbose"),
        frozen("-s", "-k"),
        frozen("--signal", "--kill-after"),
        operands=1,
    ),
    "stdbuf": Wrapping(_NO_SET, frozen("-i", "-o", "-e"), frozen("--input", "--output", "--error")),
    "time": Wrapping(frozen("-p")),
    "setsid": Wrapping(
        frozen("-c", "-f", "-w", "--ctty", "--fork", "--wait"),
        floor="setsid moves the command out of run_command's process group, so a timeout cannot stop it",
    ),
    "command": Wrapping(frozen("-p")),
    "sudo": Wrapping(
        frozen("-E", "-H", "-n", "-S", "-i", "-s", "-k"), frozen("-u", "-g", "-C", "-D", "-h", "-p")
    ),
    "doas": Wrapping(frozen("-n", "-s"), frozen("-u", "-C")),
}
#: Builtins that change the shell itself, or print the environment: never judged by their words.
_FAIL_CLOSED = {
    "alias": "aliases change what later words mean",
    "unalias": "aliases change what later words mean",
    "builtin": "builtin bypasses the command table",
    "enable": "enable changes the shell's builtins",
    "trap": "trap runs code on signals",
    "set": "set changes shell options or prints every variable",
    "shopt": "shopt changes how words are expanded",
    "export": "export changes the environment",
    "printenv": "printenv prints environment variables, which may hold secrets",
    "hash": "hash changes where programs are found",
}
_ENV_ALONE = "env without a command prints environment variables, which may hold secrets"
_OTHER_INTERPRETERS = (
    "fish", "csh", "tcsh", "pwsh", "elvish", "nu", "xonsh", "julia", "ipython", "irb", "R", "expect",
    "ts-node", "tsx", "groovy", "scala", "guile", "racket",
)  # fmt: skip
_SHELLS = ("bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "rbash")
_PYTHON_DEV_MODULES = ("pytest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "unittest", "coverage")
_SCRIPT_LOGS = ("-T", "-I", "-O", "-B", "--log-timing", "--log-in", "--log-out", "--log-io")
_SCRIPT = Spec("cEmoTIOB", frozen("--command", "--echo", "--output-limit", *_SCRIPT_LOGS), attached="t")
_NODE = Spec("erp", frozen("--eval", "--print", "--require", "--import", "--input-type", "--loader"))
_NODE_CODE = interpreters.eval_option("-e", "--eval", "-p", "--print")
_VIM = Spec("cTuUiwWsSt", frozen("--cmd"))
_AWK_VALUES = frozen("-F", "-v")  # a field separator and an assignment, not paths
# `i` as gawk reads it (`-i inplace` edits in place): where awk is gawk, it does.
_AWK = Spec("fvFi", frozen("--file", "--assign", "--field-separator", "--include", "--load"))

MODELS: list[ProgramModel] = [
    *(
        ProgramModel(name=n, is_shell=True, runs_code=True, unwraps=wrappers.shell, writes=writes.shell)
        for n in _SHELLS
    ),
    ProgramModel(
        name="eval", runs_code=True, fail_closed="eval runs a string as shell code", unwraps=wrappers.eval_
    ),
    *(
        ProgramModel(
            name=n, runs_code=True, fail_closed=f"{n} runs a file as shell code", writes=writes.shell
        )
        for n in ("source", ".")
    ),
    *(ProgramModel(name=n, fail_closed=why) for n, why in _FAIL_CLOSED.items()),
    ProgramModel(name="env", fail_closed=_ENV_ALONE, unwraps=wrappers.env),
    ProgramModel(name="xargs", unwraps=wrappers.xargs),
    *(ProgramModel(name=n, wraps=wrapping) for n, wrapping in _WRAPPERS.items()),
    ProgramModel(
        name="exec",
        fail_closed="exec replaces the shell",
        wraps=Wrapping(frozen("-c", "-l"), frozen("-a"), floor="exec replaces the shell"),
    ),
    ProgramModel(name="busybox", runs_code=True, unwraps=wrappers.busybox),
    ProgramModel(name="script", options=_SCRIPT, unwraps=wrappers.script, writes=_script_logs),
    # Shells of other syntaxes and interpreters with no model of their own: fed a download or decoded bytes,
    # they run code nobody read (their code is not read otherwise: not safe, their writes the sandbox's job).
    *(ProgramModel(name=n, runs_code=True) for n in _OTHER_INTERPRETERS),
    ProgramModel(
        name="python",
        versioned=True,
        kind="safe",
        check=checks.check_python,
        dev=tuple(("-m", tool) for tool in _PYTHON_DEV_MODULES),
        options=Spec("cmWXQ", frozen("--check-hash-based-pycs")),
        writes=_python,
        reads=walks.python_reads,
        runs_code=True,
    ),
    # pypy's own model: not python's check, whose command lines it does not share.
    ProgramModel(name="pypy", versioned=True, writes=_python),
    ProgramModel(
        name="node",
        kind="safe",
        check=checks.exact(("--version",), ("-v",)),
        options=_NODE,
        writes=_NODE_CODE,
        runs_code=True,
        opens_no_files=True,
    ),
    *alike(ProgramModel(name="nodejs", options=_NODE, writes=_NODE_CODE), "bun"),
    ProgramModel(name="deno", writes=_NODE_CODE),
    ProgramModel(
        name="perl",
        options=Spec("eEIMm", frozen(), attached="il0x"),
        writes=interpreters.perl_like,
        runs_code=True,
    ),
    ProgramModel(
        name="ruby",
        options=Spec("eEIrC", frozen(), attached="il0xF"),
        writes=interpreters.perl_like,
        runs_code=True,
    ),
    ProgramModel(name="php", options=Spec("rcdfBRFE"), writes=interpreters.eval_option("-r"), runs_code=True),
    *alike(ProgramModel(name="lua", writes=interpreters.eval_option("-e")), "Rscript"),
    ProgramModel(
        name="sed",
        kind="safe",
        check=checks.check_sed,
        options=Spec("efl", frozen("--expression", "--file", "--line-length"), attached="i"),
        writes=interpreters.sed,
        pattern_first=True,
        value_options=frozen("-e", "--expression"),
    ),
    *alike(
        ProgramModel(
            name="awk",
            kind="safe",
            check=checks.check_awk,
            globs_safe=True,
            options=_AWK,
            writes=interpreters.awk,
            pattern_first=True,
            value_options=_AWK_VALUES,
        ),
        "mawk",
    ),
    ProgramModel(
        name="gawk",
        kind="safe",
        check=checks.check_awk,
        globs_safe=True,
        options=Spec(
            "fvFilE", frozen("--file", "--assign", "--field-separator", "--include", "--load", "--exec")
        ),
        writes=interpreters.awk,
        pattern_first=True,
        value_options=_AWK_VALUES,
    ),
    ProgramModel(name="nawk", options=_AWK, writes=interpreters.awk),
    *alike(ProgramModel(name="vim", options=_VIM, writes=interpreters.editor), "vi", "nvim", "ex", "view"),
    *alike(ProgramModel(name="emacs", writes=interpreters.editor), "nano", "pico"),
    *alike(ProgramModel(name="ed", writes=interpreters.ed), "red"),
]
