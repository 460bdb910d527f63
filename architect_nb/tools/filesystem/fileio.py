"""Reading and writing workspace files safely: text decoding that explains itself, and atomic writes.

A file is decoded in its own encoding (`decode_text`): a BOM's, a Python file's coding cookie, UTF-8, or
what `encodings.choose_encoding` detects; `TextFile` remembers it and encodes edits back the same way.

Every write goes to a temporary file in the target's folder, is fsynced, takes the old file's permission bits,
and replaces the target with `os.replace`. A process killed halfway leaves the old
content or the new, never a mix.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from architect_nb.tools.filesystem.encodings import (
    EncodingError,
    choose_encoding,
    cookie_encoding,
    shown_encoding,
    unencodable,
)

__all__ = [
    "BINARY_SNIFF_BYTES",
    "FileAccessError",
    "TextFile",
    "atomic_write_bytes",
    "atomic_write_text",
    "decode_text",
    "describe_size",
    "looks_binary",
    "read_text_file",
]

BINARY_SNIFF_BYTES = 8192

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_UNICODE = frozenset(name for _, name in _BOMS)


class FileAccessError(Exception):
    """A file cannot be read or written as asked. The message is meant for the model and the person."""


@dataclass(frozen=True, slots=True)
class TextFile:
    """A decoded text file, with what is needed to write it back the way it was."""

    text: str
    encoding: str = "utf-8"
    bom: bytes = b""

    @property
    def note(self) -> str:
        """What the model is told about an encoding that cannot store every character; else ''."""
        if self.encoding in _UNICODE:
            return ""
        return f"[... file encoding: {shown_encoding(self.encoding)}; edits are saved in it]"

    @property
    def newline(self) -> str:
        """The file's dominant line ending: '\\r\\n' if most lines end so, otherwise '\\n'."""
        crlf = self.text.count("\r\n")
        return "\r\n" if crlf and crlf >= self.text.count("\n") - crlf else "\n"

    def encode(self, text: str, shown: str = "the file") -> bytes:
        """Encode `text` in this file's encoding, BOM included. Raises `FileAccessError` naming the first
        character the encoding cannot store."""
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise FileAccessError(unencodable(text, exc, self.encoding, shown)) from None


def describe_size(n_bytes: int) -> str:
    if n_bytes >= 1 << 30:
        return f"{n_bytes / (1 << 30):.1f} GB"
    if n_bytes >= 1 << 20:
        return f"{n_bytes / (1 << 20):.1f} MB"
    if n_bytes >= 1 << 10:
        return f"{n_bytes / (1 << 10):.1f} KB"
    return f"{n_bytes} bytes"


def looks_binary(head: bytes) -> bool:
    """Git's rule: a NUL byte near the start means binary, unless a UTF-16 BOM explains it."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def decode_text(data: bytes, shown_path: str) -> TextFile:
    """Decode file bytes in their encoding: a BOM's, a Python file's coding cookie, UTF-8, else a sure
    detection (`encodings.choose_encoding`). Raises `FileAccessError` for binary or undecidable bytes."""
    bom, encoding = b"", "utf-8"
    for candidate, name in _BOMS:
        if data.startswith(candidate):
            bom, encoding = candidate, name
            break
    if not bom and looks_binary(data):
        raise FileAccessError(
            f"'{shown_path}' is a binary file ({describe_size(len(data))}); it cannot be read as text."
        )
    try:
        declared = None if bom else cookie_encoding(data, shown_path)
    except EncodingError as exc:
        raise FileAccessError(str(exc)) from None
    encoding = declared or encoding
    try:
        text = data[len(bom) :].decode(encoding)
    except UnicodeDecodeError as exc:
        if bom or declared:
            raise FileAccessError(_undecodable(data, exc.start + len(bom), encoding, shown_path)) from None
    else:
        if declared and text.encode(declared) != data:
            raise FileAccessError(
                f"'{shown_path}' declares {declared}, which does not give back the same bytes; it cannot be "
                "edited safely. Convert it to UTF-8 with run_command (iconv) first."
            )
        return TextFile(text=text, encoding=encoding, bom=bom)
    try:
        encoding = choose_encoding(data, shown_path)
    except EncodingError as exc:
        raise FileAccessError(str(exc)) from None
    return TextFile(text=data.decode(encoding), encoding=encoding)


def _undecodable(data: bytes, offset: int, encoding: str, shown_path: str) -> str:
    line = data.count(b"\n", 0, offset) + 1
    return (
        f"'{shown_path}' is not valid {shown_encoding(encoding)}: byte 0x{data[offset]:02x} at offset "
        f"{offset} (line {line}) cannot be decoded, so it cannot be read or edited as text."
    )


def read_text_file(path: Path, shown_path: str, max_bytes: int | None = None) -> TextFile:
    """Read and decode a whole text file, refusing folders, special files and files over `max_bytes`."""
    st = _stat_regular(path, shown_path)
    if max_bytes is not None and st.st_size > max_bytes:
        raise FileAccessError(
            f"'{shown_path}' is {describe_size(st.st_size)}, over the {describe_size(max_bytes)} limit; "
            "read it in parts with offset/limit."
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileAccessError(f"'{shown_path}' cannot be read: {exc.strerror or exc}.") from None
    return decode_text(data, shown_path)


def _stat_regular(path: Path, shown_path: str) -> os.stat_result:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileAccessError(
            f"'{shown_path}' does not exist. Use list_files or find_files to find the file."
        ) from None
    except OSError as exc:
        raise FileAccessError(f"'{shown_path}' cannot be opened: {exc.strerror or exc}.") from None
    if stat.S_ISDIR(st.st_mode):
        raise FileAccessError(
            f"'{shown_path}' is a directory, not a file. Use list_files to see what it holds."
        )
    if not stat.S_ISREG(st.st_mode):
        raise FileAccessError(
            f"'{shown_path}' is not a regular file (a device, socket or pipe); it is refused."
        )
    return st


_umask_lock = threading.Lock()
_umask: int | None = None


def _current_umask() -> int:
    global _umask  # noqa: PLW0603 - read once; os.umask can only be read by setting it
    with _umask_lock:
        if _umask is None:
            _umask = os.umask(0o022)
            os.umask(_umask)
        return _umask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically, keeping its permission bits (or the umask's for a new file)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_current_umask()
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:64]}.", suffix=".architect-tmp")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, like: TextFile | None = None, shown: str = "") -> bytes:
    """Write `text` atomically, encoded like `like` (UTF-8 by default). Returns the bytes written."""
    data = (like or TextFile(text="")).encode(text, shown or path.name)
    atomic_write_bytes(path, data)
    return data


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; some filesystems refuse to open a folder, which is harmless.
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
