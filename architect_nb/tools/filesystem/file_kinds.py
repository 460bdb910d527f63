"""What a binary file is, told from its first bytes and its name, for the places a change is described.

A data science workspace is mostly databases, pickles, arrays, images and archives. Their content is never
decoded as text; wherever a change to one is shown or sent (the review, the run's record, the transcript,
the model's tool results), it is described instead: its kind, its size before and after, and a short id of
its content (`describe_change`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from architect_nb.tools.filesystem.fileio import describe_size, looks_binary

__all__ = ["BlobFacts", "describe_change", "is_binary", "kind_of"]

#: Leading bytes of formats that are binary whatever else they hold, and their names.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"\x1f\x8b", "gzip data"),
    (b"BZh", "bzip2 data"),
    (b"\xfd7zXZ\x00", "xz data"),
    (b"(\xb5/\xfd", "Zstandard data"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"PK\x05\x06", "ZIP archive"),
    (b"PAR1", "Parquet file"),
    (b"ARROW1", "Arrow file"),
    (b"\x93NUMPY", "NumPy array"),
    (b"\x89HDF\r\n\x1a\n", "HDF5 file"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"\x7fELF", "ELF executable"),
)
#: Formats a ZIP archive is the container of, by extension.
_ZIPPED = {
    ".xlsx": "Excel workbook",
    ".xlsm": "Excel workbook",
    ".docx": "Word document",
    ".pptx": "PowerPoint file",
    ".npz": "NumPy archive",
    ".jar": "Java archive",
    ".whl": "Python wheel",
    ".odt": "OpenDocument text",
    ".ods": "OpenDocument spreadsheet",
}
#: Kinds told by extension alone, for formats with no fixed leading bytes.
_BY_EXTENSION = {
    ".pkl": "pickle",
    ".pickle": "pickle",
    ".joblib": "joblib pickle",
    ".db": "database",
    ".sqlite": "SQLite database",
    ".sqlite3": "SQLite database",
    ".feather": "Feather file",
    ".h5": "HDF5 file",
    ".hdf5": "HDF5 file",
    ".xls": "Excel 97 workbook",
    ".pt": "PyTorch file",
    ".pth": "PyTorch file",
    ".onnx": "ONNX model",
    ".tfrecord": "TFRecord file",
    ".mat": "MATLAB file",
    ".sav": "SPSS file",
    ".dta": "Stata file",
    ".orc": "ORC file",
    ".avro": "Avro file",
    ".wav": "WAV audio",
    ".mp3": "MP3 audio",
    ".mp4": "MP4 video",
    ".webp": "WebP image",
    ".tif": "TIFF image",
    ".tiff": "TIFF image",
}
_PICKLE_PROTOCOLS = frozenset(range(2, 6))


@dataclass(frozen=True, slots=True)
class BlobFacts:
    """One version of a file: its size, a short id of its content, and its first bytes (a few KB)."""

    size: int
    short_id: str
    head: bytes


def kind_of(path: str, head: bytes) -> str:
    """The file's kind ("SQLite database", "Excel workbook (ZIP)", "pickle", ...) or "binary data"."""
    extension = os.path.splitext(path)[1].lower()
    for signature, kind in _SIGNATURES:
        if head.startswith(signature):
            if kind == "ZIP archive" and extension in _ZIPPED:
                return f"{_ZIPPED[extension]} (ZIP)"
            if kind == "SQLite database" and path.endswith(("-wal", "-shm", "-journal")):
                break  # a database's side file is named by what follows
            return kind
    if path.endswith(("-wal", "-journal")):
        return "SQLite journal"
    if path.endswith("-shm"):
        return "SQLite shared memory"
    if len(head) >= 2 and head[0] == 0x80 and head[1] in _PICKLE_PROTOCOLS:
        return "pickle"
    return _BY_EXTENSION.get(extension, "binary data")


def is_binary(head: bytes) -> bool:
    """Whether content that starts so is binary: a NUL byte in it (git's rule) or a binary format's bytes."""
    if looks_binary(head):
        return True
    return any(head.startswith(signature) for signature, _kind in _SIGNATURES)


def describe_change(path: str, before: BlobFacts | None, after: BlobFacts | None) -> str:
    """One line for a change to a binary file: what it is, its size and content id before and after."""
    head = after.head if after is not None else (before.head if before is not None else b"")
    kind = kind_of(path, head)
    if before is None and after is not None:
        return f"Binary file ({kind}) added: {describe_size(after.size)}, id {after.short_id}."
    if after is None and before is not None:
        return f"Binary file ({kind}) deleted: was {describe_size(before.size)}, id {before.short_id}."
    assert before is not None and after is not None
    if before.short_id == after.short_id:
        return f"Binary file ({kind}) unchanged in content: {describe_size(after.size)}, id {after.short_id}."
    return (
        f"Binary file ({kind}) changed: {describe_size(before.size)} → {describe_size(after.size)}, "
        f"id {before.short_id} → {after.short_id}."
    )
