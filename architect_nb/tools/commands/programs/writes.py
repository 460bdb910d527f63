"""What programs write: the write models the program models name (`operands("removes")` for `rm`), and
`effects(program, args, stdin, fed)`, which says which paths a command changes (`effects`) by its model's.

Every model reads its arguments with the program's own option table (`options`). A program without a write
model writes nothing its words can tell: the project's own code (`pytest`, `make`, `python script.py`) is
judged by the confirmation mode, and held by the OS sandbox where it runs.
"""

from __future__ import annotations

from architect_nb.tools.commands.programs.effects import (
    Change,
    Copy,
    Effect,
    FoundByFind,
    FromInput,
    Stdin,
    Unknown,
)
from architect_nb.tools.commands.programs.git import git_effects
from architect_nb.tools.commands.programs.interpreters import script_operand
from architect_nb.tools.commands.programs.model import WriteModel
from architect_nb.tools.commands.programs.options import (
    literal,
    program_options,
)
from architect_nb.tools.commands.programs.registry import described
from architect_nb.tools.commands.shell_words import Word
from architect_nb.tools.commands.wrappers import unwrap

__all__ = [
    "RECURSIVE",
    "copying",
    "curl",
    "dd",
    "effects",
    "find",
    "git",
    "install",
    "jupyter",
    "operands",
    "option_targets",
    "sd",
    "second_operand",
    "shell",
    "wget",
]


RECURSIVE = ("-r", "-R", "--recursive")


def effects(program: str, args: list[Word], stdin: Stdin, fed: bool) -> list[Effect]:
    """What `program args...` changes. `stdin`: what it reads on its input; `fed`: xargs adds operands."""
    model = described(program)
    if model.writes is not None:
        return model.writes(program, args, stdin, fed)
    manifests = dict(model.manifests)
    if args and args[0].value in manifests:
        return [Change(literal(name), "rewrites", implied=True) for name in manifests[args[0].value or ""]]
    return []


# ------------------------------------------------------------------ files named as operands


def operands(verb: str, tree: tuple[str, ...] = (), skip: int = 0) -> WriteModel:
    """Every operand is changed (`rm`, `chmod`, `touch`, `tee`, ...); the first `skip` are not paths."""

    def model(program: str, args: list[Word], _stdin: Stdin, fed: bool) -> list[Effect]:
        opts = program_options(program, args)
        recursive = opts.has(*tree)
        found: list[Effect] = [Change(w, verb, recursive) for w in opts.operands[skip:]]
        return [*found, FromInput(verb, recursive)] if fed else found

    return model


def option_targets(verb: str, names: tuple[str, ...]) -> WriteModel:
    """The files given to output options (`sort -o FILE`, `iconv --output FILE`)."""

    def model(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
        return [Change(w, verb) for w in program_options(program, args).of(*names)]

    return model


def second_operand(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    """`uniq IN OUT`, `xxd IN OUT`."""
    operands = program_options(program, args).operands
    return [Change(operands[1], "writes")] if len(operands) > 1 else []


def dd(_program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    found: list[Effect] = []
    for word in args:
        if word.value is not None and word.value.startswith("of="):
            found.append(Change(literal(word.value[3:]), "writes"))
        elif word.value is None and word.skeleton.startswith("of="):
            found.append(Change(word, "writes"))
    return found


def shell(program: str, args: list[Word], stdin: Stdin, _fed: bool) -> list[Effect]:
    """A shell's own commands are judged as commands (`shell_runs` parses `-c` strings, here-docs and what a
    literal echo pipes in); what is left is a script only known when it runs: `bash <(...)`, or commands
    piped from an echo of computed words. A script file is the project's code. Its options are read by the
    wrappers' parse, as everywhere."""
    shell = unwrap(program, args, None)
    if shell is None:  # `source FILE`, `. FILE`: the file is the script
        return script_operand(program, args[0]) if args else []
    if shell.script is not None:
        return script_operand(program, shell.script)
    if shell.reads_stdin and stdin.piped is not None and stdin.piped.value is None:
        return [Unknown(f"{program} runs commands an echo computes when it runs; write them out")]
    return []


def sd(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    """`sd FIND REPLACE FILE...` edits the files in place."""
    return [Change(w, "edits in place") for w in program_options(program, args).operands[2:]]


# ------------------------------------------------------------------ copies and moves


def copying(verb: str, *, removes: bool = False, links: bool = False) -> WriteModel:
    def model(program: str, args: list[Word], _stdin: Stdin, fed: bool) -> list[Effect]:
        opts = program_options(program, args)
        target = opts.of("-t", "--target-directory")
        operands = [w for w in opts.operands if program not in ("scp", "rsync") or not _remote(w)]
        if program in ("scp", "rsync") and len(operands) < len(opts.operands) and _remote(opts.operands[-1]):
            return []  # the destination is another machine
        if fed and not target:
            return [FromInput(verb, tree=True)]  # xargs appends names after the destination
        into: bool | None = True
        if target:
            sources, dest = tuple(operands), target[-1]
        elif program == "ln" and len(operands) == 1:
            sources, dest = tuple(operands), literal(".")
        elif len(operands) >= 2:
            sources, dest = tuple(operands[:-1]), operands[-1]
            into = False if opts.has("-T", "--no-target-directory") else None
        else:
            return [Change(w, verb) for w in operands]
        recursive = removes or opts.has("-r", "-R", "-a", "--recursive", "--archive")
        found: list[Effect] = [
            Copy(
                sources,
                dest,
                verb,
                into=into,
                tree=recursive,
                contents=program == "rsync" and all((s.value or "").endswith("/") for s in sources),
                removes=removes or opts.has("--remove-source-files"),
                links=links or opts.has("-l", "--link", "-s", "--symbolic-link"),
                parents=opts.has("--parents"),
            )
        ]
        if program == "rsync" and any(f.startswith("--delete") for f in opts.flags):
            found.append(Change(dest, "deletes files in", tree=True))
        if fed:
            found.append(FromInput(verb, tree=True))
        return found

    return model


def _remote(word: Word) -> bool:
    text = word.value or word.skeleton
    head = text.split("/", 1)[0]
    return ":" in head and not text.startswith(("./", "/"))


def install(program: str, args: list[Word], stdin: Stdin, fed: bool) -> list[Effect]:
    opts = program_options(program, args)
    if opts.has("-d", "--directory"):
        return [Change(w, "creates") for w in opts.operands]
    return copying("installs over")(program, args, stdin, fed)


# ------------------------------------------------------------------ downloads


def curl(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    opts = program_options(program, args)
    where = opts.last("--output-dir")
    found: list[Effect] = [
        Change(w, "writes", within=where)
        for w in opts.of("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar")
        + opts.of("--trace", "--trace-ascii", "--stderr")
        if w.value != "-"
    ]
    if opts.has("-J", "--remote-header-name"):
        return [*found, Unknown("curl -J names the file as the server says; choose the name with -o")]
    if opts.has("-O", "--remote-name", "--remote-name-all"):
        found += [Change(_url_name(w), "writes", within=where) for w in opts.operands if _is_url(w)]
    return found


def wget(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    opts = program_options(program, args)
    named = [w for w in opts.of("-O", "--output-document") if w.value != "-"]
    if named:
        return [Change(w, "writes") for w in named]
    if opts.has("-r", "--recursive", "-m", "--mirror"):
        return [Unknown("wget -r writes the files the server links to; download them by name with -O")]
    where = opts.last("-P", "--directory-prefix")
    return [Change(_url_name(w), "writes", within=where) for w in opts.operands if _is_url(w)]


def _is_url(word: Word) -> bool:
    return "://" in (word.value or word.skeleton)


def _url_name(word: Word) -> Word:
    if word.value is None:
        return word
    path = word.value.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    name = path.rsplit("/", 1)[-1] if "/" in path else ""
    return literal(name or "index.html")


# ------------------------------------------------------------------ find and the rest


def find(_program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    found: list[Effect] = []
    for i, word in enumerate(args):
        if word.value == "-delete":
            found.append(FoundByFind("removes"))
        elif word.value in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(args):
            found.append(Change(args[i + 1], "writes"))
    return found


def git(_program: str, args: list[Word], stdin: Stdin, _fed: bool) -> list[Effect]:
    return git_effects(args, stdin)


def jupyter(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    values = [w.value for w in args]
    if values[:1] == ["nbconvert"] and "--inplace" in values:
        return [Change(w, "rewrites") for w in program_options(program, args[1:]).operands]
    return []
