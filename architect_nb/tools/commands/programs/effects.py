"""What a command may change, as the per-program models (`writes`, `git`) describe it and the
check of protected files (`protected_writes`) judges it. Each effect says where its names come from: a word
of the command, or something only the disk knows (an archive's members, a patch's files, what find reaches).
"""

from __future__ import annotations

from dataclasses import dataclass

from architect_nb.tools.commands.shell_words import Word

__all__ = [
    "Change",
    "Code",
    "Copy",
    "Effect",
    "Extract",
    "FoundByFind",
    "FromInput",
    "GitCheckout",
    "GitTree",
    "PatchFrom",
    "Pathspecs",
    "Stdin",
    "Unknown",
    "Within",
]


@dataclass(frozen=True, slots=True)
class Stdin:
    """What a command reads on its standard input, as far as the command line tells."""

    file: Word | None = None  # `< FILE`
    text: Word | None = None  # a here-doc or here-string (its value is None when it expands at run time)
    #: What an `echo` or `printf` before it in a pipe prints (`echo CODE | python3`): known text, or a word
    #: with no value when that text is computed at run time.
    piped: Word | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """A path a word names, which the command writes, removes, moves or changes the mode of."""

    word: Word
    verb: str  # "writes", "removes", ...: how the refusal says it
    tree: bool = False  # and everything under it (`rm -r`, `chmod -R`, a moved folder)
    implied: bool = False  # the program picks the name itself (`uv add` rewrites pyproject.toml)
    within: Word | None = None  # relative to this folder, not the command's (`curl --output-dir`)


@dataclass(frozen=True, slots=True)
class Copy:
    """`cp`, `mv`, `install`, `ln`, `rsync`, `git mv`: sources land in a destination."""

    sources: tuple[Word, ...]
    dest: Word
    verb: str
    into: bool | None = None  # True: dest is a folder (`-t`); False: dest is the new name (`-T`); None: ask
    tree: bool = False  # recursive: a source folder's files land under the destination too
    contents: bool = False  # a source folder's contents, not the folder, land in dest (`rsync src/ dst`)
    removes: bool = False  # the sources go (`mv`)
    links: bool = False  # the destination becomes another name of the source (`ln`, `cp -l`)
    parents: bool = False  # the source's whole path lands under dest (`cp --parents`)


@dataclass(frozen=True, slots=True)
class FromInput:
    """`xargs`: names read from the input land where the program writes."""

    verb: str
    tree: bool = False


@dataclass(frozen=True, slots=True)
class FoundByFind:
    """`find -delete`, `find -exec rm {} +`: what find reaches is changed."""

    verb: str
    tree: bool = False


@dataclass(frozen=True, slots=True)
class Code:
    """Inline code (`python -c`, `node -e`, a here-doc fed to an interpreter): judged by what it mentions,
    and by what it does with the words given after it (`argv`), which it may open by index."""

    program: str
    text: str
    argv: tuple[Word, ...] = ()


@dataclass(frozen=True, slots=True)
class Extract:
    """Archive extraction: the members land in a folder."""

    kind: str  # "tar", "zip"
    archive: Word | None  # None: read from an input nothing tells
    directory: Word | None = None
    members: tuple[Word, ...] = ()  # only these (and what lies under them)
    strip: int = 0  # leading path components dropped (`--strip-components`)
    flat: bool = False  # members land by their name only (`unzip -j`, `7z e`)
    keep_old: bool = False  # existing files are left alone (`tar -k`, `unzip -n`)
    excludes: tuple[
        str, ...
    ] = ()  # members left out (`tar --exclude`, `unzip -x`), matched as the program does


@dataclass(frozen=True, slots=True)
class PatchFrom:
    """`patch`, `git apply`: the files a patch names are changed."""

    source: Word | None  # the patch file; None: a here-doc (`text`) or an input nothing tells
    text: Word | None = None
    directory: Word | None = None
    strip: int | None = None  # `-pN`; None: patch's default, any suffix of the path may be the file


@dataclass(frozen=True, slots=True)
class Pathspecs:
    """git paths (`git checkout -- X`, `git rm X`): a folder covers what lies under it, and git matches
    wildcards itself (`'*.toml'`, across folders)."""

    words: tuple[Word, ...]
    verb: str


@dataclass(frozen=True, slots=True)
class GitTree:
    """git rewrites the work tree: with what changed between commits (`pairs`), by discarding local changes
    (`local`), by removing untracked files (`untracked`), or in a way only the repository knows (`any`)."""

    command: str  # "git checkout main": how the refusal says it
    pairs: tuple[tuple[str, str], ...] = ()  # (from, to): the work tree takes what changed between them
    adds: tuple[
        str, ...
    ] = ()  # commits whose every file it writes, if they exist (a stash's untracked files)
    merge: bool = False  # pairs' `from` is replaced by the merge base of `from` and `to`
    local: bool = False
    untracked: bool = False
    any: bool = False
    paths: tuple[Word, ...] = ()  # only under these
    advice: str = ""  # what to do instead, when it is not the usual


@dataclass(frozen=True, slots=True)
class GitCheckout:
    """`git checkout X [PATHS]`: a switch to the commit X if X is one, else the restore of the paths X..."""

    target: Word
    paths: tuple[Word, ...]
    force: bool


@dataclass(frozen=True, slots=True)
class Unknown:
    """The command changes files it does not name in a way no model reads (`cpio -p`, `git pull`)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Within:
    """Effects of a program that works in another folder (`git -C DIR`)."""

    directory: Word
    effects: tuple[Effect, ...]


Effect = (
    Change
    | Copy
    | FromInput
    | FoundByFind
    | Code
    | Extract
    | PatchFrom
    | Pathspecs
    | GitTree
    | GitCheckout
    | Unknown
    | Within
)
