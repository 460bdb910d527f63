"""Archivers, compressors, decoders and `patch`: what they extract, create, replace or patch
(`archivers`), and which of them turn encoded bytes back into text (piped into a shell, that hides code)."""

from __future__ import annotations

from architect_nb.tools.commands.programs import archivers, walks
from architect_nb.tools.commands.programs.model import ProgramModel, Spec, alike

__all__ = ["MODELS"]


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


_GZIP = Spec("S", _f("--suffix"))
_ZSTD = Spec("oSTBDLM", _f("--output", "--format", "--threads"))
_DECOMPRESS = _f("-d", "--decompress", "-dc", "-cd")
_SHRINK = archivers.compressor

MODELS: list[ProgramModel] = [
    ProgramModel(
        name="tar",
        options=Spec(
            "fCTXbNgKLV",
            _f("--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--strip-components"),
        ),
        writes=archivers.tar,
        reads=walks.tar_reads,
    ),
    ProgramModel(
        name="zip",
        options=Spec("xibn", _f("--exclude", "--include")),
        writes=archivers.zip_,
        reads=walks.zip_reads,
    ),
    ProgramModel(name="unzip", options=Spec("dxP"), writes=archivers.unzip),
    *alike(ProgramModel(name="7z", writes=archivers.seven_zip, reads=walks.seven_zip_reads), "7za", "7zr"),
    ProgramModel(name="cpio", writes=archivers.cpio),
    *alike(ProgramModel(name="gzip", options=_GZIP, writes=_SHRINK, decodes=_DECOMPRESS), "bzip2", "xz"),
    *alike(ProgramModel(name="pigz", options=_GZIP, writes=_SHRINK), "lzma", "lz4", "bunzip2"),
    *alike(ProgramModel(name="gunzip", options=_GZIP, writes=_SHRINK, decodes=True), "unxz"),
    ProgramModel(name="zstd", options=_ZSTD, writes=_SHRINK, decodes=_DECOMPRESS),
    ProgramModel(name="unzstd", options=_ZSTD, writes=_SHRINK),
    *alike(ProgramModel(name="unlzma", writes=_SHRINK), "uncompress"),
    *alike(ProgramModel(name="zcat", decodes=True), "bzcat", "xzcat", "zstdcat", "uudecode"),
    *alike(ProgramModel(name="base32", decodes=_f("-d", "--decode")), "basenc"),
    ProgramModel(name="openssl", decodes=_f("-d", "-decode")),
    ProgramModel(
        name="patch",
        options=Spec(
            "pdiFoBrVYzDg", _f("--strip", "--directory", "--input", "--output", "--reject-file", "--suffix")
        ),
        writes=archivers.patch,
    ),
]
