"""What archivers, compressors and `patch` write: an extraction's members (listed before it runs), the
archive a creation writes, the files `--remove-files` or `zip -m` take away, the file `gzip` replaces, and
the files a patch names. Part of `writes`.
"""

from __future__ import annotations

from architect_nb.tools.commands.programs.effects import (
    Change,
    Effect,
    Extract,
    FromInput,
    PatchFrom,
    Stdin,
    Unknown,
)
from architect_nb.tools.commands.programs.options import (
    literal,
    number,
    program_options,
)
from architect_nb.tools.commands.shell_words import Word

__all__ = ["DECOMPRESSORS", "compressor", "cpio", "patch", "seven_zip", "tar", "unzip", "zip_"]

_COMPRESSED = (".tar.gz", ".tgz", ".gz", ".z", ".bz2", ".tbz2", ".xz", ".txz", ".lzma", ".zst", ".lz4", ".Z")
_SUFFIX = {
    "gzip": ".gz", "pigz": ".gz", "bzip2": ".bz2", "xz": ".xz", "lzma": ".lzma", "zstd": ".zst",
    "lz4": ".lz4",
}  # fmt: skip
DECOMPRESSORS = frozenset({"gunzip", "bunzip2", "unxz", "unzstd", "unlzma", "uncompress"})


# ------------------------------------------------------------------ archives and compressors


def tar(program: str, args: list[Word], stdin: Stdin, _fed: bool) -> list[Effect]:
    first = args[0].value if args else None
    cluster = first if first and not first.startswith("-") else ""
    opts = program_options(program, [literal("-" + first), *args[1:]] if cluster and first else args)
    flags = opts.flags
    if opts.has("-O", "--to-stdout", "--to-command") or opts.of("--to-command"):
        return []
    archive = opts.last("-f", "--file")
    directory = opts.last("-C", "--directory")
    found: list[Effect] = []
    if flags & {"-x", "--extract", "--get"}:
        strip = number(opts.last("--strip-components")) or 0
        keep = opts.has("-k", "--keep-old-files", "--skip-old-files")
        if archive is None or archive.value == "-":
            archive = stdin.file  # `tar x < a.tar`; with neither, what the pipe brings
        excludes = tuple(w.value for w in opts.of("--exclude") if w.value is not None)
        found.append(
            Extract(
                "tar", archive, directory, tuple(opts.operands), strip=strip, keep_old=keep, excludes=excludes
            )
        )
    elif flags & {"-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--delete"}:
        if archive is not None and archive.value != "-":
            found.append(Change(archive, "writes"))
        if opts.has("--remove-files"):
            found += [Change(w, "removes", tree=True, within=directory) for w in opts.operands]
    return found


def unzip(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    before_x: list[Word] = []
    excluded: list[str] = []
    for i, word in enumerate(args):
        if word.value == "-x":
            excluded = [w.value for w in args[i + 1 :] if w.value is not None and not w.value.startswith("-")]
            break
        before_x.append(word)
    opts = program_options(program, before_x)
    if opts.has("-l", "-t", "-p", "-v", "-Z", "-c", "-z") or not opts.operands:
        return []
    directory = opts.last("-d")
    return [
        Extract(
            "zip",
            opts.operands[0],
            directory,
            tuple(opts.operands[1:]),
            flat=opts.has("-j"),
            keep_old=opts.has("-n"),
            excludes=tuple(f"zip:{x}" for x in excluded),
        )
    ]


def zip_(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    opts = program_options(program, args)
    if not opts.operands:
        return []
    found: list[Effect] = [Change(opts.operands[0], "writes")]
    if opts.has("-m", "--move"):
        found += [Change(w, "moves into an archive", tree=True) for w in opts.operands[1:]]
    return found


def seven_zip(program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    opts = program_options(program, args)
    if len(opts.operands) < 2 or opts.operands[0].value is None:
        return []
    command, archive = opts.operands[0].value, opts.operands[1]
    out = [w for w in args if (w.value or "").startswith("-o")]
    directory = literal((out[-1].value or "")[2:]) if out else None
    if command in ("x", "e"):
        return [Extract("zip", archive, directory, tuple(opts.operands[2:]), flat=command == "e")]
    if command in ("a", "u", "d", "rn"):
        sdel = any(w.value == "-sdel" for w in args)
        deleted = [Change(w, "removes", tree=True) for w in opts.operands[2:]] if sdel else []
        return [Change(archive, "writes"), *deleted]  # -sdel: the files go once archived
    return []


def cpio(_program: str, args: list[Word], _stdin: Stdin, _fed: bool) -> list[Effect]:
    values = {w.value for w in args}
    if values & {"-t", "--list"}:
        return []
    if any(
        (v or "").startswith("-") and "i" in (v or "")[1:] and not (v or "").startswith("--") for v in values
    ):
        return [
            Unknown("cpio extracts an archive from its input; list it first (cpio -t) and name the files")
        ]
    if values & {"--extract", "-p", "--pass-through"} or any((v or "").startswith("-p") for v in values):
        return [Unknown("cpio writes the files named on its input; copy the files you need by name")]
    return []


def compressor(program: str, args: list[Word], _stdin: Stdin, fed: bool) -> list[Effect]:
    """gzip and friends replace each file in place: `gzip f` removes f, `gunzip f.gz` writes f."""
    opts = program_options(program, args)
    if opts.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"):
        return []
    decompress = program in DECOMPRESSORS or opts.has("-d", "--decompress", "--uncompress")
    keeps = opts.has("-k", "--keep") or (program in ("zstd", "lz4") and not opts.has("--rm"))
    output = opts.of("-o", "--output")
    if output:
        gone: list[Effect] = [] if keeps else [Change(w, "replaces") for w in opts.operands]
        return [*gone, *(Change(w, "writes") for w in output)]
    recursive = opts.has("-r", "--recursive")
    found: list[Effect] = []
    for word in opts.operands:
        if not keeps:
            found.append(Change(word, "replaces", tree=recursive))
        if recursive or word.value is None:
            found.append(Change(word, "rewrites", tree=recursive))
            continue
        name = word.value
        if decompress:
            ending = next((e for e in _COMPRESSED if name.lower().endswith(e.lower())), "")
            written = name[: -len(ending)] + (".tar" if ending in (".tgz", ".tbz2", ".txz") else "")
        else:
            written = name + _SUFFIX.get(program, ".gz")
        found.append(Change(literal(written), "writes"))
    return [*found, FromInput("replaces")] if fed else found


def patch(program: str, args: list[Word], stdin: Stdin, _fed: bool) -> list[Effect]:
    opts = program_options(program, args)
    if opts.has("--dry-run"):
        return []
    output = opts.of("-o", "--output")
    if output:
        return [Change(w, "writes") for w in output]
    strip = number(opts.last("-p", "--strip"))
    directory = opts.last("-d", "--directory")
    if opts.operands:  # `patch FILE [PATCHFILE]`: the file is named
        return [Change(opts.operands[0], "patches", within=directory)]
    source = opts.last("-i", "--input") or stdin.file
    return [PatchFrom(source, None if source is not None else stdin.text, directory, strip)]
