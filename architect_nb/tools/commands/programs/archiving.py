"""Archivers, compressors, decoders and `patch`: what they extract, create, replace or patch
(`archivers`), and which of them turn encoded bytes back into text (piped into a shell, that hides code)."""

from __future__ import annotations

from architect_nb.tools.commands.programs import archivers, walks
from architect_nb.tools.commands.programs.model import ProgramModel, Spec, alike, frozen

__all__ = ["MODELS"]


_GZIP = Spec("S", frozen("--suffix"))
_ZSTD = Spec("oSTBDLM", frozen("--output", "--format", "--threads"))
_DECOMPRESS = frozen("-d", "--decompress", "-dc", "-cd")
_SHRINK = archivers.compressor

MODELS: list[ProgramModel] = [
    ProgramModel(
        name="tar",
        options=Spec(
            "fCTXbNgKLV",
            frozen(
                "--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--strip-components"
            ),
        ),
        writes=archivers.tar,
        reads=walks.tar_reads,
    ),
    ProgramModel(
        name="zip",
        options=Spec("xibn", frozen("--exclude", "--include")),
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
    *alike(ProgramModel(name="base32", decodes=frozen("-d", "--decode")), "basenc"),
    ProgramModel(name="openssl", decodes=frozen("-d", "-decode")),
    ProgramModel(
        name="patch",
        options=Spec(
            "pdiFoBrVYzDg",
            frozen("--strip", "--directory", "--input", "--output", "--reject-file", "--suffix"),
        ),
        writes=archivers.patch,
    ),
]
