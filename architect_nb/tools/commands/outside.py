"""Path arguments that lead outside the workspace (`..`, absolute paths, `~`, `$HOME`): what the sandbox
cannot give, since it leaves the rest of the file system readable. A command with one is never `safe`.

The check is lexical, on the words as bash will see them. Words that are not paths are skipped: a search
pattern or a script given before the files (`grep PATTERN FILE`, `sed -n '/x/p' FILE`), the values of options
such as `cut -d /`, and the arguments of programs that never open files (`echo`, `tr`, `which`, ...): each
program's model says which (`opens_no_files`, `pattern_first`, `value_options`).
"""

from __future__ import annotations

from collections.abc import Sequence

from architect_nb.tools.commands.programs.registry import described
from architect_nb.tools.commands.shell_words import Word

__all__ = ["leads_outside", "outside_path"]

#: Options after which the pattern is not an operand (`grep -e x FILE`, `rg --files`, `awk -f prog FILE`).
_PATTERN_GIVEN = frozenset({"-e", "--regexp", "-f", "--file", "--expression", "--files", "--from-file"})
#: Variables that hold paths outside the workspace. Others are judged elsewhere: a loop variable holds loop
#: words (judged themselves), and any variable that is not benign may hold a secret, so it already asks.
_OUTSIDE_VARIABLES = ("HOME", "OLDPWD", "TMPDIR", "SHELL")
_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"})


def leads_outside(program: str, args: Sequence[Word]) -> str | None:
    """The first argument of `program` (a `program_key`) that names a path outside the workspace, or None."""
    model = described(program)
    if model.opens_no_files:
        return None
    value_options = model.value_options
    # A word with expansions is judged by its template (`${HOME}/x`), or as written when it computes.
    texts = [w.value if w.value is not None else (w.template or w.text) for w in args]
    pattern_pending = model.pattern_first and not any(t.split("=", 1)[0] in _PATTERN_GIVEN for t in texts)
    skip_next = False
    for word, text in zip(args, texts, strict=True):
        if skip_next:
            skip_next = False
            continue
        if text == "--":
            continue
        if text.startswith("-") and text != "-":
            name, _, value = text.partition("=")
            if name in value_options and not value:
                skip_next = True
            elif value and text.startswith("--") and name not in value_options and outside_path(value):
                return text
            continue
        if pattern_pending:
            pattern_pending = False
            continue
        if not word.substituted and outside_path(text):  # substitutions ask for their own reason
            return word.text
    return None


def outside_path(path: str) -> bool:
    """Whether `path` leads outside the folder it is read from: absolute, `~`, `$HOME`, or `..`."""
    if path in _DEVICES:
        return False
    if path.startswith(("/", "~")):
        return True
    if path.startswith("$") and any(path.startswith((f"${v}", f"${{{v}}}")) for v in _OUTSIDE_VARIABLES):
        return True
    return ".." in path.split("/")
