"""Reading a program's command line as GNU getopt does: options anywhere before `--`, short clusters
(`-rn`, `-C2`), `--name=value`, and which options take a value. The per-program models (what a program
reads, lists or writes) all read arguments through it, with one table of which options take a value
(`SPECS`), so a reader and a writer never disagree about where `cp`'s operands are.

Options are read from parsed shell words: a word known only at run time (`"$D"`) stays a word, so a model can
tell "writes to a folder named by a variable" from "writes to build/".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from architect_nb.tools.commands.shell_words import Word

__all__ = [
    "SPECS",
    "Options",
    "Spec",
    "literal",
    "number",
    "options",
    "paths",
    "program_options",
    "word_options",
]

T = TypeVar("T")


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class Spec:
    """How a program's options take values."""

    short: str = ""  # short options that take a value, attached (`-C2`) or as the next word
    long: frozenset[str] = frozenset()  # long options that take the next word as their value
    attached: str = ""  # short options whose optional value can only be attached (`sed -i.bak`, `perl -i`)


_RG_LONG = _f(
    "--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count", "--context",
    "--after-context", "--before-context", "--threads", "--max-depth", "--encoding", "--replace", "--sort",
    "--sortr", "--max-columns", "--max-filesize", "--pre", "--pre-glob", "--ignore-file", "--type-add",
    "--engine", "--color", "--colors", "--path-separator", "--context-separator", "--field-match-separator",
)  # fmt: skip
_GREP_LONG = _f("--regexp", "--file", "--max-count", "--after-context", "--before-context")
_RSYNC_LONG = _f(
    "--exclude", "--include", "--filter", "--files-from", "--exclude-from", "--include-from", "--temp-dir",
    "--partial-dir", "--backup-dir", "--link-dest", "--compare-dest", "--copy-dest", "--log-file", "--chmod",
    "--rsync-path", "--port", "--password-file", "--suffix", "--out-format", "--timeout", "--rsh",
)  # fmt: skip
_CURL_LONG = _f(
    "--output", "--output-dir", "--dump-header", "--cookie-jar", "--cookie", "--trace", "--trace-ascii",
    "--stderr", "--data", "--data-raw", "--data-binary", "--header", "--user", "--user-agent", "--request",
    "--referer", "--form", "--config", "--max-time", "--upload-file", "--write-out", "--proxy", "--range",
)  # fmt: skip

#: How each modelled program's options take values.
SPECS: dict[str, Spec] = {
    "grep": Spec("efmABCdD", _GREP_LONG | _f("--directories", "--devices", "--label")),
    "git-grep": Spec("efABCm", _GREP_LONG),
    "rg": Spec("efgtTmABCjMdErs", _RG_LONG),
    "ag": Spec("Gg", _RG_LONG),
    "ack": Spec("Gg", _RG_LONG),
    "fd": Spec("etdEx", _f("--extension", "--type", "--max-depth", "--exclude")),
    "ls": Spec("IwT", _f("--ignore", "--hide", "--width")),
    "tar": Spec(
        "fCTXbNgKLV",
        _f("--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--strip-components"),
    ),
    "zip": Spec("xibn", _f("--exclude", "--include")),
    "unzip": Spec("dxP"),
    "cp": Spec("tS", _f("--target-directory", "--suffix")),
    "mv": Spec("tS", _f("--target-directory", "--suffix")),
    "ln": Spec("tS", _f("--target-directory", "--suffix")),
    "install": Spec("gmoSt", _f("--group", "--mode", "--owner", "--suffix", "--target-directory")),
    "rsync": Spec("efTBM", _RSYNC_LONG),
    "scp": Spec("cFiJloPS"),
    "rm": Spec(),
    "shred": Spec("ns", _f("--iterations", "--size", "--random-source")),
    "truncate": Spec("sr", _f("--size", "--reference")),
    "touch": Spec("dtr", _f("--date", "--reference", "--time")),
    "mkdir": Spec("m", _f("--mode", "--context")),
    "mkfifo": Spec("m", _f("--mode", "--context")),
    "mknod": Spec("m", _f("--mode", "--context")),
    "chattr": Spec("pv"),
    "setfacl": Spec(
        "mMxX", _f("--modify", "--modify-file", "--remove", "--remove-file", "--set", "--set-file")
    ),
    "sort": Spec(
        "kotTS", _f("--key", "--output", "--field-separator", "--temporary-directory", "--buffer-size")
    ),
    "shuf": Spec("ion", _f("--input-range", "--output", "--head-count", "--random-source")),
    "iconv": Spec("oft", _f("--output", "--from-code", "--to-code")),
    "xxd": Spec("cglosC"),
    "sed": Spec("efl", _f("--expression", "--file", "--line-length"), attached="i"),
    "awk": Spec("fvF", _f("--file", "--assign", "--field-separator", "--include", "--load")),
    "gawk": Spec("fvFilE", _f("--file", "--assign", "--field-separator", "--include", "--load", "--exec")),
    "perl": Spec("eEIMm", _f(), attached="il0x"),
    "ruby": Spec("eEIrC", _f(), attached="il0xF"),
    "python": Spec("cmWXQ", _f("--check-hash-based-pycs")),
    "node": Spec("erp", _f("--eval", "--print", "--require", "--import", "--input-type", "--loader")),
    "php": Spec("rcdfBRFE"),
    "vim": Spec("cTuUiwWsSt", _f("--cmd")),
    "patch": Spec(
        "pdiFoBrVYzDg", _f("--strip", "--directory", "--input", "--output", "--reject-file", "--suffix")
    ),
    "curl": Spec("AbcCdDeEFHKmoPQrTuUwxXyYz", _CURL_LONG),
    "wget": Spec(
        "OPoaeUtTwQiBDlAR", _f("--output-document", "--directory-prefix", "--output-file", "--tries")
    ),
    "find": Spec(),
    "7z": Spec(),
    "gzip": Spec("S", _f("--suffix")),
    "zstd": Spec("oSTBDLM", _f("--output", "--format", "--threads")),
    "yq": Spec("", _f("--indent", "--arg", "--argjson")),
}
for _alias, _of in {
    "egrep": "grep", "fgrep": "grep", "zgrep": "grep", "fdfind": "fd", "mawk": "awk", "nawk": "awk",
    "7za": "7z", "7zr": "7z", "bzip2": "gzip", "xz": "gzip", "lzma": "gzip", "lz4": "gzip", "pigz": "gzip",
    "gunzip": "gzip", "bunzip2": "gzip", "unxz": "gzip", "unzstd": "zstd", "nodejs": "node", "bun": "node",
    "vi": "vim", "nvim": "vim", "ex": "vim", "view": "vim", "chmod": "rm", "chown": "rm", "chgrp": "rm",
    "unlink": "rm", "rmdir": "rm",
}.items():  # fmt: skip
    SPECS[_alias] = SPECS[_of]


@dataclass(slots=True)
class Options(Generic[T]):
    flags: set[str] = field(default_factory=set)  # "-r", "--hidden", ...
    values: list[tuple[str, T]] = field(default_factory=list)  # ("--exclude", "*.log"), ...
    operands: list[T] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(n in self.flags for n in names)

    def of(self, *names: str) -> list[T]:
        return [v for n, v in self.values if n in names]

    def last(self, *names: str) -> T | None:
        """The value of the last of these options given (the one a program keeps)."""
        found = self.of(*names)
        return found[-1] if found else None


def number(word: Word | None) -> int | None:
    """The value of a word that is a whole number (`-p1`, `--strip-components 2`)."""
    return int(word.value) if word is not None and word.value is not None and word.value.isdigit() else None


def literal(text: str) -> Word:
    """A word whose value is `text` (a part of another word, or a name a model computed)."""
    return Word(text=text, value=text, skeleton=text)


def _part(word: Word, value: str) -> Word:
    return Word(text=value, value=value, skeleton=value, globbed=word.globbed)


def word_options(args: Sequence[Word], spec: Spec) -> Options[Word]:
    """Options anywhere before `--` (GNU style), short clusters (`-rn`, `-C2`), `--name=value`.

    A word known only at run time is an operand, unless its literal start makes it an option that takes a
    value (`--target-directory="$D"`): then it is that option's value, still unknown."""
    out: Options[Word] = Options()
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        text = word.value
        if text is None:
            known = word.skeleton
            if known.startswith("--") and "=" in known:
                out.values.append((known.partition("=")[0], word))
            elif known.startswith("-") and len(known) > 1 and known[1] in spec.short:
                out.values.append((known[:2], word))
            else:
                out.operands.append(word)
            continue
        if text == "--":
            out.operands += args[i:]
            break
        if text.startswith("--"):
            name, eq, attached = text.partition("=")
            if eq:
                out.values.append((name, _part(word, attached)))
            elif name in spec.long and i < len(args):
                out.values.append((name, args[i]))
                i += 1
            else:
                out.flags.add(name)
        elif text.startswith("-") and len(text) > 1:
            for at, letter in enumerate(text[1:], start=1):
                if letter in spec.attached:
                    out.values.append((f"-{letter}", _part(word, text[at + 1 :])))
                    break
                if letter in spec.short:
                    rest = text[at + 1 :]
                    if not rest and i < len(args):
                        out.values.append((f"-{letter}", args[i]))
                        i += 1
                    else:
                        out.values.append((f"-{letter}", _part(word, rest)))
                    break
                out.flags.add(f"-{letter}")
        else:
            out.operands.append(word)
    return out


def program_options(program: str, args: Sequence[Word]) -> Options[Word]:
    """`word_options` with the program's own spec (none: every option is a flag)."""
    return word_options(args, SPECS.get(program, Spec()))


def options(args: Sequence[str], spec: Spec) -> Options[str]:
    """`word_options` for arguments already known as text."""
    parsed = word_options([literal(a) for a in args], spec)
    return Options(
        flags=parsed.flags,
        values=[(n, w.value or "") for n, w in parsed.values],
        operands=[w.value or "" for w in parsed.operands],
    )


def paths(operands: Sequence[str], cwd: str, default: str | None = ".") -> list[str]:
    names = list(operands) or ([default] if default else [])
    return [os.path.realpath(os.path.join(cwd, n)) for n in names if os.path.exists(os.path.join(cwd, n))]
