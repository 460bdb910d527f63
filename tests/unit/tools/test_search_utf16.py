"""grep reads UTF-16 with a BOM as text, as rg does, on every backend; what is not text stays skipped."""

from __future__ import annotations

import codecs
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.tools.search.grep import BACKENDS, BackendName, make_backend, rg_view
from architect_nb.tools.search.search_tools import GrepTool, SearchCodeTool

INSTALLED: list[BackendName] = [name for name in BACKENDS if make_backend(name) is not None]

TEXT = "first line\r\nsecond: café TODO\r\nthird\r\n\r\nfifth TODO again\r\n"


@pytest.fixture
def encoded(workspace: Path) -> Path:
    """The same text as UTF-16 LE and BE with a BOM, UTF-8 with and without one, and UTF-16 without a BOM."""
    (workspace / "le.txt").write_bytes(codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"))
    (workspace / "be.txt").write_bytes(codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"))
    (workspace / "bom8.txt").write_bytes(codecs.BOM_UTF8 + TEXT.encode("utf-8"))
    (workspace / "plain.txt").write_bytes(TEXT.encode("utf-8"))
    (workspace / "no_bom.txt").write_bytes(TEXT.encode("utf-16-le"))  # NUL bytes and no BOM: binary
    return workspace


@pytest.mark.parametrize("backend", INSTALLED)
def test_grep_matches_in_utf16_with_the_right_lines(encoded: Path, backend: BackendName) -> None:
    result = GrepTool(encoded, backend=backend).execute(pattern="TODO")
    assert result.metadata["backend"] == backend
    assert result.output.splitlines() == [
        f"{name}:{line}"
        for name in ("be.txt", "bom8.txt", "le.txt", "plain.txt")
        for line in ("2: second: café TODO", "5: fifth TODO again")
    ]


@pytest.mark.parametrize("backend", INSTALLED)
def test_grep_in_utf16_ignoring_case_and_at_line_starts(encoded: Path, backend: BackendName) -> None:
    tool = GrepTool(encoded, backend=backend)
    assert tool.execute(pattern="CAFÉ", case_sensitive=False, path="le.txt").output == (
        "le.txt:2: second: café TODO"
    )
    # The BOM is not part of the first line: a search for its start finds it.
    for name in ("le.txt", "be.txt", "bom8.txt"):
        assert tool.execute(pattern="first", path=name).output == f"{name}:1: first line"


@pytest.mark.parametrize("backend", INSTALLED)
def test_utf16_without_a_bom_stays_binary(encoded: Path, backend: BackendName) -> None:
    result = GrepTool(encoded, backend=backend).execute(pattern="first", path="no_bom.txt")
    assert result.output.startswith("No matches for 'first' in 'no_bom.txt'")
    (encoded / "blob.bin").write_bytes(b"TODO\x00\x01\x02")
    assert "blob.bin" not in GrepTool(encoded, backend=backend).execute(pattern="TODO").output


def test_grep_and_search_code_agree_on_utf16(encoded: Path) -> None:
    (encoded / "le16.txt").write_bytes((encoded / "le.txt").read_bytes())
    (encoded / "be16.txt").write_bytes((encoded / "be.txt").read_bytes())
    grep = GrepTool(encoded).execute(pattern="TODO", file_pattern="*16.txt")
    code = SearchCodeTool(encoded).execute(pattern="TODO", file_pattern="*16.txt", context_lines=0)
    assert grep.output == code.output
    assert grep.metadata["matches"] == code.metadata["matches"] == 4


def test_rg_view_drops_boms_as_rg_does() -> None:
    assert rg_view(codecs.BOM_UTF8 + b"a\xff\n") == b"a\xff\n"  # UTF-8: raw bytes, BOM dropped
    assert rg_view(codecs.BOM_UTF8 * 2 + b"a") == codecs.BOM_UTF8 + b"a"
    assert rg_view(codecs.BOM_UTF16_LE * 2 + "é".encode("utf-16-le")) == "é".encode()
    assert rg_view(codecs.BOM_UTF16_BE + b"\xd8\x00\x00a") == "\ufffda".encode()  # a lone surrogate
    assert rg_view(codecs.BOM_UTF16_LE + b"a\x00b") == "a\ufffd".encode()  # an odd byte at the end
    assert rg_view(b"plain \x00 bytes") == b"plain \x00 bytes"


_units = st.lists(
    st.sampled_from(["a", "T", "TODO", "\n", "\r\n", "é", "\U0001f600", "\ufeff", "\u212a"]).map(
        lambda s: s.encode("utf-16-le")
    )
    | st.sampled_from([b"\x00\xd8", b"\x00\xdc", b"\x00", b"\xff\xfe", b"\x00\x00"]),
    max_size=12,
).map(b"".join)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bodies=st.lists(_units, min_size=1, max_size=3),
    big_endian=st.booleans(),
    needle=st.sampled_from(["TODO", "a", "é", "\ufffd", "\U0001f600", "k"]),
    case_sensitive=st.booleans(),
)
def test_backends_agree_on_any_utf16_bytes(
    bodies: list[bytes], big_endian: bool, needle: str, case_sensitive: bool
) -> None:
    """Broken UTF-16 too (lone surrogates, an odd last byte): rg's decoding and ours give the same lines."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        for i, le_body in enumerate(bodies):
            if big_endian:  # swap each pair of bytes, keeping an odd last byte
                body = b"".join(le_body[k : k + 2][::-1] for k in range(0, len(le_body), 2))
                (root / f"f{i}.txt").write_bytes(codecs.BOM_UTF16_BE + body)
            else:
                (root / f"f{i}.txt").write_bytes(codecs.BOM_UTF16_LE + le_body)
        outputs = {
            name: GrepTool(root, backend=name).execute(pattern=needle, case_sensitive=case_sensitive).output
            for name in INSTALLED
        }
    assert len(set(outputs.values())) == 1, outputs
