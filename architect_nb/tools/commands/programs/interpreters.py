"""What interpreters and editors write: the code they are given inline (`python -c`, `node -e`, `perl -e`, a
here-doc fed to `python3 -`, an awk program, a sed script that writes), judged by what it mentions, and the
files they edit in place (`sed -i`, `perl -pi`, `awk -i inplace`, `vim`, `ed`). Part of `writes`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from architect_nb.tools.commands.programs.effects import (
    Change,
    Code,
    Effect,
    Extract,
    FromInput,
    Stdin,
    Unknown,
)
from architect_nb.tools.commands.programs.options import (
    literal,
    program_options,
)
from architect_nb.tools.commands.shell_words import Word

__all__ = [
    "awk",
    "ed",
    "editor",
    "eval_option",
    "perl_like",
    "python",
    "python_command",
    "script_operand",
    "sed",
]

_SED_WRITES = re.compile(r"(?:^|[\s;{}0-9$/!,])[wW]\s|/[gpiImMe0-9]*w\s|(?:^|[\s;{}])e(?:\s|$)")
_AWK_WRITES = re.compile(r">|\bsystem\s*\(|\|")


def _code(program: str, word: Word, argv: Sequence[Word] = ()) -> Effect:
    if word.value is None:
        return Unknown(f"{program} runs code known only when it runs ({word.text[:60]}); write the code out")
    return Code(program, word.value, tuple(argv))


def _stdin_code(program: str, stdin: Stdin, argv: Sequence[Word] = ()) -> list[Effect]:
    """Code read from the input: a here-doc, or what an echo before it in the pipe prints. Another program's
    output (`cat tool.py | python3`) is the project's code, like a script."""
    given = stdin.text if stdin.text is not None else stdin.piped
    return [_code(program, given, argv)] if given is not None else []


def script_operand(program: str, word: Word) -> list[Effect]:
    """A script given as `<(...)`: its code is known only when it runs (a file is the project's code)."""
    if word.value is None and word.substituted:
        return [Unknown(f"{program} runs a script known only when it runs ({word.text[:60]}); write it out")]
    return []


def editor(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    """vim, ex, emacs, nano: the files opened are edited; `-c` and `+cmd` commands are code."""
    opts = program_options(program, args)
    files = [w for w in opts.operands if not (w.value or w.skeleton).startswith("+")]
    commands = [w for w in opts.operands if (w.value or w.skeleton).startswith("+")]
    commands += opts.of("-c", "--cmd")
    found: list[Effect] = [Change(w, "edits") for w in files]
    return found + [_code(program, w) for w in commands]


def ed(program: str, args: list[Word], stdin: Stdin, _fed: bool) -> list[Effect]:
    found: list[Effect] = [Change(w, "edits") for w in program_options(program, args).operands]
    return found + _stdin_code(program, stdin)


# ------------------------------------------------------------------ stream editors and interpreters


def _in_place(files: Sequence[Word], fed: bool) -> list[Effect]:
    """The files an editor rewrites in place, and those xargs adds (`fed`)."""
    found: list[Effect] = [Change(w, "edits in place") for w in files]
    return [*found, FromInput("edits in place")] if fed else found


def sed(program: str, args: list[Word], _stdin: Stdin, fed: bool) -> list[Effect]:
    opts = program_options(program, args)
    scripts = opts.of("-e", "--expression")
    operands = opts.operands
    if not scripts and not opts.of("-f", "--file") and operands:
        scripts, operands = [operands[0]], operands[1:]
    found: list[Effect] = [_code(program, w) for w in scripts if _SED_WRITES.search(w.value or w.skeleton)]
    if opts.of("-i", "--in-place") or opts.has("--in-place"):
        found += _in_place(operands, fed)
    return found


def awk(program: str, args: list[Word], _stdin: Stdin, fed: bool) -> list[Effect]:
    opts = program_options(program, args)
    operands = opts.operands
    found: list[Effect] = []
    if not opts.of("-f", "--file") and operands:
        program_text, operands = operands[0], operands[1:]
        if _AWK_WRITES.search(program_text.value or program_text.skeleton):
            found.append(_code(program, program_text))
    includes = [w.value for w in opts.of("-i", "--include")]
    if "inplace" in includes or "inplace.awk" in includes:
        found += _in_place(operands, fed)
    return found


def perl_like(program: str, args: list[Word], stdin: Stdin, fed: bool) -> list[Effect]:
    """perl and ruby: `-e` code, and `-i` edits the files in place."""
    opts = program_options(program, args)
    code = opts.of("-e", "-E")
    found: list[Effect] = [_code(program, w, opts.operands) for w in code]
    if not code:
        given = opts.operands[0] if opts.operands and opts.operands[0].value != "-" else None
        found += script_operand(program, given) if given is not None else _stdin_code(program, stdin)
    if opts.of("-i"):
        found += _in_place(opts.operands if code else opts.operands[1:], fed)
    return found


def eval_option(*names: str) -> Callable[[str, list[Word], Stdin, bool], list[Effect]]:
    """Interpreters given code by an option (`node -e`, `php -r`, `lua -e`, `Rscript -e`)."""

    def model(program: str, args: list[Word], stdin: Stdin, _fed: bool) -> list[Effect]:
        opts = program_options(program, args)
        code = opts.of(*names)
        if program == "deno" and opts.operands[:1] and opts.operands[0].value == "eval":
            code += opts.operands[1:2]
        if code:
            argv = opts.operands[2:] if program == "deno" and code == opts.operands[1:2] else opts.operands
            return [_code(program, w, argv) for w in code]
        if opts.operands and opts.operands[0].value != "-":
            return script_operand(program, opts.operands[0])
        return _stdin_code(program, stdin)

    return model


def python(args: list[Word], stdin: Stdin) -> list[Effect]:
    """`python -c CODE`, `python - <<EOF`, and the standard library's extractors (`-m zipfile -e`)."""
    how, given, rest = python_command(args)
    if how == "file" and given is not None:
        return script_operand("python", given)  # a file is the project's own code
    if how == "c" and given is not None:
        return [_code("python", given, rest)]
    if how == "m" and given is not None:
        return _python_module(given.value or "", rest)
    return _stdin_code("python", stdin, rest) if how == "stdin" else []


def python_command(args: Sequence[Word]) -> tuple[str, Word | None, Sequence[Word]]:
    """Where `python args...` gets its code, read as python reads its options: ("c", CODE, argv),
    ("m", MODULE, argv), ("file", SCRIPT, argv) or ("stdin", None, argv); ("missing", None, ()) when `-c` or
    `-m` has no value."""
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None or not value.startswith("-"):
            return "file", args[i], args[i + 1 :]
        if value == "-":
            return "stdin", None, args[i + 1 :]
        i += 1
        if value.startswith("--"):
            i += value == "--check-hash-based-pycs"
            continue
        for at, letter in enumerate(value[1:], start=1):
            rest = value[at + 1 :]
            if letter in "cm":
                taken = literal(rest) if rest else (args[i] if i < len(args) else None)
                if taken is None:
                    return "missing", None, ()
                return letter, taken, args[i + (not rest) :]
            if letter in "WXQ":
                i += not rest  # its value is the next word
                break
    return "stdin", None, ()


def _python_module(module: str, args: Sequence[Word]) -> list[Effect]:
    """The standard library's command lines that write files: archives made or extracted, `json.tool`."""
    values = [w.value for w in args]
    if module in ("zipfile", "tarfile") and values[:1] and len(args) > 1:
        if values[0] in ("-e", "--extract"):
            target = args[2] if len(args) > 2 else None
            return [Extract("zip" if module == "zipfile" else "tar", args[1], directory=target)]
        if values[0] in ("-c", "--create"):
            return [Change(args[1], "writes")]
    if module == "json.tool":
        operands = [w for w in args if not (w.value or "-").startswith("-")]
        return [Change(operands[1], "writes")] if len(operands) > 1 else []
    return []
