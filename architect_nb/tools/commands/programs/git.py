"""What a git command does to the work tree: the git model of the check of protected files.

Most git commands leave the work tree alone (`status`, `diff`, `add`, `commit`, `log`, `fetch`, ...). Those
that rewrite it take what changed between two commits (`checkout BRANCH`, `merge`, `cherry-pick`,
`stash pop`), discard local changes (`reset --hard`, `stash`, `checkout -f`), remove untracked files
(`clean`, `stash -u`), restore or remove named paths (`checkout -- X`, `restore`, `rm`, `mv`), apply a patch
(`apply`, `am`), or write what only another repository knows (`pull`). This module reads the command line;
the guardrails' `git_state` asks the repository what each would touch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from architect_nb.tools.commands.programs.effects import (
    Change,
    Copy,
    Effect,
    GitCheckout,
    GitTree,
    PatchFrom,
    Pathspecs,
    Stdin,
    Unknown,
    Within,
)
from architect_nb.tools.commands.programs.options import Options, Spec, literal, number, word_options
from architect_nb.tools.commands.shell_words import Word

__all__ = ["git_effects"]

HEAD = "HEAD"
_GLOBAL_VALUES = frozenset(
    {"-c", "--git-dir", "--namespace", "--exec-path", "--config-env", "--super-prefix"}
)
_NOT_KNOWN = "git gets an option known only when it runs; write it out"

Subcommand = Callable[[list[Word], list[Word], Stdin], list[Effect]]


def git_effects(args: Sequence[Word], stdin: Stdin) -> list[Effect]:
    """What `git args...` changes in the work tree."""
    folders: list[Word] = []
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            return [Unknown(_NOT_KNOWN)]
        if not value.startswith("-"):
            break
        name, eq, rest = value.partition("=")
        if name in ("-C", "--work-tree"):
            if eq:
                folders.append(literal(rest))
            elif i + 1 < len(args):
                folders.append(args[i + 1])
                i += 1
        elif name in _GLOBAL_VALUES and not eq:
            i += 1
        i += 1
    if i >= len(args):
        return []
    before, after = _split(args[i + 1 :])
    model = _SUBCOMMANDS.get(args[i].value or "")
    found = model(before, after, stdin) if model is not None else []
    for folder in reversed(folders):
        found = [Within(folder, tuple(found))]
    return found


def _split(words: Sequence[Word]) -> tuple[list[Word], list[Word]]:
    """The words before `--` and the paths after it."""
    for i, word in enumerate(words):
        if word.value == "--":
            return list(words[:i]), list(words[i + 1 :])
    return list(words), []


def _opts(words: list[Word], short: str = "", *long: str) -> Options[Word] | None:
    if any(w.value is None and w.skeleton.startswith("-") for w in words):
        return None
    return word_options(words, Spec(short, frozenset(long)))


def _rev(word: Word) -> str | None:
    return "@{-1}" if word.value == "-" else word.value


def _checkout(before: list[Word], after: list[Word], _stdin: Stdin) -> list[Effect]:
    opts = _opts(before, "bB", "--orphan", "--conflict", "--pathspec-from-file")
    if opts is None or opts.of("--pathspec-from-file"):
        return [Unknown(_NOT_KNOWN)]
    force = opts.has("-f", "--force")
    operands = opts.operands
    if opts.of("--orphan"):
        return [GitTree("git checkout --orphan", any=True)]
    paths = tuple(after)
    if after or opts.of("-b", "-B"):
        start = operands[0] if operands else None
        paths = tuple(operands[1:]) + paths if not after else paths
        found: list[Effect] = []
        if start is not None:
            rev = _rev(start)
            if rev is None:
                return [Unknown(_NOT_KNOWN)]
            found.append(GitTree(f"git checkout {rev}", pairs=((HEAD, rev),), local=force, paths=paths))
        elif force and not paths:
            found.append(GitTree("git checkout -f", local=True))
        return [*found, Pathspecs(paths, "restores")] if paths else found
    if not operands:
        return [GitTree("git checkout -f", local=True)] if force else []
    return [GitCheckout(operands[0], tuple(operands[1:]), force)]


def _switch(before: list[Word], _after: list[Word], _stdin: Stdin) -> list[Effect]:
    opts = _opts(before, "cC", "--create", "--force-create", "--orphan", "--conflict")
    if opts is None:
        return [Unknown(_NOT_KNOWN)]
    if opts.of("--orphan"):
        return [GitTree("git switch --orphan", any=True)]
    force = opts.has("-f", "--force", "--discard-changes")
    target = opts.operands[0] if opts.operands else None  # with -c NEW, the start point
    if target is None:
        return [GitTree("git switch -f", local=True)] if force else []
    rev = _rev(target)
    if rev is None:
        return [Unknown(_NOT_KNOWN)]
    return [GitTree(f"git switch {rev}", pairs=((HEAD, rev),), local=force)]


def _restore(before: list[Word], after: list[Word], _stdin: Stdin) -> list[Effect]:
    opts = _opts(before, "s", "--source", "--pathspec-from-file", "--conflict")
    if opts is None or opts.of("--pathspec-from-file"):
        return [Unknown(_NOT_KNOWN)]
    if opts.has("-S", "--staged") and not opts.has("-W", "--worktree"):
        return []  # the index only
    return [Pathspecs((*opts.operands, *after), "restores")]


def _reset(before: list[Word], _after: list[Word], _stdin: Stdin) -> list[Effect]:
    opts = _opts(before, "", "--pathspec-from-file")
    if opts is None:
        return [Unknown(_NOT_KNOWN)]
    if not opts.has("--hard", "--merge", "--keep"):
        return []  # the index and HEAD only
    rev = _rev(opts.operands[0]) if opts.operands else HEAD
    if rev is None:
        return [Unknown(_NOT_KNOWN)]
    mode = next(f for f in ("--hard", "--merge", "--keep") if opts.has(f))
    return [GitTree(f"git reset {mode} {rev}", pairs=((HEAD, rev),), local=mode != "--keep")]


def _stash(before: list[Word], after: list[Word], _stdin: Stdin) -> list[Effect]:
    sub = before[0].value if before and not (before[0].value or "-").startswith("-") else "push"
    rest = before[1:] if before and before[0].value == sub else before
    if sub in ("push", "save"):
        opts = _opts(rest, "m", "--message", "--pathspec-from-file")
        if opts is None or opts.of("--pathspec-from-file"):
            return [Unknown(_NOT_KNOWN)]
        paths = tuple(after) + (tuple(opts.operands) if sub == "push" else ())
        untracked = opts.has("-u", "--include-untracked", "-a", "--all")
        return [GitTree("git stash", local=True, untracked=untracked, paths=paths)]
    if sub in ("pop", "apply", "branch"):
        operands = [w for w in rest if not (w.value or "").startswith("-")]
        ref_word = operands[-1] if operands and (sub != "branch" or len(operands) > 1) else None
        ref = ref_word.value if ref_word is not None else "stash@{0}"
        if ref is None:
            return [Unknown(_NOT_KNOWN)]
        if ref.isdigit():
            ref = f"stash@{{{ref}}}"
        return [GitTree(f"git stash {sub}", pairs=((f"{ref}^1", ref),), adds=(f"{ref}^3",))]
    return []


def _mv(before: list[Word], after: list[Word], _stdin: Stdin) -> list[Effect]:
    opts = _opts(before)
    if opts is None:
        return [Unknown(_NOT_KNOWN)]
    operands = [*opts.operands, *after]
    if len(operands) < 2:
        return []
    return [Copy(tuple(operands[:-1]), operands[-1], "moves onto", tree=True, removes=True)]


def _rm(before: list[Word], after: list[Word], _stdin: Stdin) -> list[Effect]:
    opts = _opts(before, "", "--pathspec-from-file")
    if opts is None or opts.of("--pathspec-from-file"):
        return [Unknown(_NOT_KNOWN)]
    if opts.has("--cached", "-n", "--dry-run"):
        return []
    return [Pathspecs((*opts.operands, *after), "removes")]


def _clean(before: list[Word], after: list[Word], _stdin: Stdin) -> list[Effect]:
    opts = _opts(before, "e", "--exclude")
    if opts is None:
        return [Unknown(_NOT_KNOWN)]
    if opts.has("-n", "--dry-run"):
        return []
    return [GitTree("git clean", untracked=True, paths=(*opts.operands, *after))]


def _apply(before: list[Word], after: list[Word], stdin: Stdin) -> list[Effect]:
    opts = _opts(before, "pC", "--directory", "--exclude", "--include", "--build-fake-ancestor")
    if opts is None:
        return [Unknown(_NOT_KNOWN)]
    if opts.has("--check", "--stat", "--numstat", "--summary") and not opts.has("--apply"):
        return []
    if opts.has("--cached") and not opts.has("--index"):
        return []
    return _patches(opts, after, stdin)


def _patches(opts: Options[Word], after: list[Word], stdin: Stdin) -> list[Effect]:
    strip = number(opts.last("-p"))
    strip = 1 if strip is None else strip
    directory = opts.last("--directory")
    files = [*opts.operands, *after]
    if not files:
        return [PatchFrom(stdin.file, stdin.text if stdin.file is None else None, directory, strip)]
    return [PatchFrom(f, None, directory, strip) for f in files]


def _am(before: list[Word], after: list[Word], stdin: Stdin) -> list[Effect]:
    values = {w.value for w in before}
    if values & {"--abort", "--skip"}:
        return [GitTree("git am --abort", local=True)]
    if values & {"--continue", "--resolved", "-r", "--quit", "--show-current-patch"}:
        return []
    opts = _opts(before, "pC", "--directory", "--exclude", "--include")
    if opts is None:
        return [Unknown(_NOT_KNOWN)]
    return _patches(opts, after, stdin)


def _sequencer(name: str, short: str, *long: str) -> Subcommand:
    """merge, cherry-pick, revert and rebase: the work tree takes what the named commits change."""

    def model(before: list[Word], _after: list[Word], _stdin: Stdin) -> list[Effect]:
        values = {w.value for w in before}
        if values & {"--abort", "--skip"}:
            return [GitTree(f"git {name} --abort", local=True)]
        if values & {"--continue", "--quit", "--edit-todo", "--show-current-patch"}:
            return []
        opts = _opts(before, short, *long)
        if opts is None:
            return [Unknown(_NOT_KNOWN)]
        revs = [w.value for w in opts.operands] + [w.value for w in opts.of("--onto")]
        if any(r is None for r in revs):
            return [Unknown(_NOT_KNOWN)]
        known = [r for r in revs if r is not None] or ["@{u}"]
        command = f"git {name} {' '.join(known)}"
        if name == "merge":
            return [GitTree(command, pairs=tuple((HEAD, r) for r in known), merge=True)]
        if name == "rebase":
            return [GitTree(command, pairs=tuple((HEAD, r) for r in known))]
        pairs = tuple(tuple(r.split("..", 1)) if ".." in r else (f"{r}^", r) for r in known)
        return [GitTree(command, pairs=tuple((a, b) for a, b in pairs))]

    return model


def _whole(name: str, *harmless: str, advice: str = "") -> Subcommand:
    """Commands that may rewrite any tracked file, in ways only the repository knows."""

    def model(before: list[Word], _after: list[Word], _stdin: Stdin) -> list[Effect]:
        sub = before[0].value if before else None
        if sub in harmless or (name == "read-tree" and not ({"-u", "--reset"} & {w.value for w in before})):
            return []
        return [GitTree(f"git {name}", any=True, advice=advice)]

    return model


def _output(before: list[Word], _after: list[Word], _stdin: Stdin) -> list[Effect]:
    """`git diff --output=FILE`, `git archive -o FILE`: a file the command writes."""
    opts = _opts(before, "o", "--output")
    return [Change(w, "writes") for w in opts.of("-o", "--output")] if opts is not None else []


_SUBCOMMANDS: dict[str, Subcommand] = {
    "checkout": _checkout,
    "switch": _switch,
    "restore": _restore,
    "reset": _reset,
    "stash": _stash,
    "mv": _mv,
    "rm": _rm,
    "clean": _clean,
    "apply": _apply,
    "am": _am,
    "merge": _sequencer("merge", "msX", "--strategy", "--strategy-option", "--message"),
    "cherry-pick": _sequencer("cherry-pick", "mX", "--mainline", "--strategy", "--strategy-option"),
    "revert": _sequencer("revert", "mX", "--mainline", "--strategy", "--strategy-option"),
    "rebase": _sequencer("rebase", "sXx", "--onto", "--strategy", "--strategy-option", "--exec"),
    "pull": _whole(
        "pull", advice="Fetch first (git fetch), then merge: a merge is judged by what it changes."
    ),
    "bisect": _whole("bisect", "log", "visualize", "view", "terms", "help"),
    "sparse-checkout": _whole("sparse-checkout", "list", "check-rules"),
    "read-tree": _whole("read-tree"),
    "checkout-index": _whole("checkout-index"),
    "diff": _output,
    "log": _output,
    "show": _output,
    "archive": _output,
}
