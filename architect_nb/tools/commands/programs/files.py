"""The programs that change files by name: remove, create, change modes, copy, move, link and rewrite
(`rm`, `touch`, `chmod`, `cp`, `mv`, `ln`, `install`, `dd`, `sd`). None is safe."""

from __future__ import annotations

from architect_nb.tools.commands.programs import walks, writes
from architect_nb.tools.commands.programs.model import ProgramModel, Spec, alike, frozen

__all__ = ["MODELS"]


_RSYNC_LONG = frozen(
    "--exclude", "--include", "--filter", "--files-from", "--exclude-from", "--include-from", "--temp-dir",
    "--partial-dir", "--backup-dir", "--link-dest", "--compare-dest", "--copy-dest", "--log-file", "--chmod",
    "--rsync-path", "--port", "--password-file", "--suffix", "--out-format", "--timeout", "--rsh",
)  # fmt: skip
_COPY = Spec("tS", frozen("--target-directory", "--suffix"))
_MODE = Spec("m", frozen("--mode", "--context"))
_RECURSIVE = writes.RECURSIVE

MODELS: list[ProgramModel] = [
    *alike(ProgramModel(name="rm", writes=writes.operands("removes", _RECURSIVE)), "unlink", "rmdir"),
    ProgramModel(
        name="shred",
        options=Spec("ns", frozen("--iterations", "--size", "--random-source")),
        writes=writes.operands("overwrites"),
    ),
    ProgramModel(
        name="truncate",
        options=Spec("sr", frozen("--size", "--reference")),
        writes=writes.operands("truncates"),
    ),
    ProgramModel(
        name="touch",
        options=Spec("dtr", frozen("--date", "--reference", "--time")),
        writes=writes.operands("touches"),
    ),
    ProgramModel(name="chmod", writes=writes.operands("changes the mode of", _RECURSIVE)),
    *alike(ProgramModel(name="chown", writes=writes.operands("changes the owner of", _RECURSIVE)), "chgrp"),
    ProgramModel(
        name="chattr",
        options=Spec("pv"),
        writes=writes.operands("changes the attributes of", ("-R", "--recursive")),
    ),
    ProgramModel(
        name="setfacl",
        options=Spec(
            "mMxX", frozen("--modify", "--modify-file", "--remove", "--remove-file", "--set", "--set-file")
        ),
        writes=writes.operands("changes the attributes of", ("-R", "--recursive")),
    ),
    *alike(ProgramModel(name="mkdir", options=_MODE, writes=writes.operands("creates")), "mkfifo", "mknod"),
    ProgramModel(name="sponge", writes=writes.operands("writes")),
    *alike(ProgramModel(name="dos2unix", writes=writes.operands("rewrites")), "unix2dos", "mac2unix"),
    ProgramModel(name="cp", options=_COPY, writes=writes.copying("copies onto"), reads=walks.copy_reads),
    ProgramModel(
        name="scp", options=Spec("cFiJloPS"), writes=writes.copying("copies onto"), reads=walks.copy_reads
    ),
    ProgramModel(
        name="rsync",
        options=Spec("efTBM", _RSYNC_LONG),
        writes=writes.copying("copies onto"),
        reads=walks.copy_reads,
    ),
    ProgramModel(name="mv", options=_COPY, writes=writes.copying("moves onto", removes=True)),
    ProgramModel(name="ln", options=_COPY, writes=writes.copying("links onto", links=True)),
    ProgramModel(
        name="install",
        options=Spec("gmoSt", frozen("--group", "--mode", "--owner", "--suffix", "--target-directory")),
        writes=writes.install,
    ),
    ProgramModel(name="dd", writes=writes.dd),
    ProgramModel(name="sd", writes=writes.sd),
    # perl's `rename EXPR FILE...` and util-linux's `rename FROM TO FILE...`: the files after the first word
    # (util-linux's TO is taken as one too: over-matching is the safe mistake).
    ProgramModel(name="rename", writes=writes.operands("renames", skip=1)),
]
