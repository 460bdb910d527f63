"""Files that are not UTF-8: read, searched, edited, patched and written in their own encoding, byte-exact."""

from __future__ import annotations

import codecs
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.execution.engine import ExecutionEngine
from architect_nb.tools.filesystem.edit_file import EditFileTool
from architect_nb.tools.filesystem.fileio import FileAccessError, decode_text
from architect_nb.tools.patch.apply_patch import ApplyPatchTool
from architect_nb.tools.search.grep import BACKENDS, make_backend
from architect_nb.tools.search.search_tools import GrepTool
from tests.support.engine import make_engine

INSTALLED = [name for name in BACKENDS if make_backend(name) is not None]
CSV = "name;price;note\r\n“Widget”;12,50 €;it’s fine\r\nCafé crème;3,00 €;très bon – ok\r\n"
NOTE = "[... file encoding: {}; edits are saved in it]"


def engine_on(workspace: Path) -> ExecutionEngine:
    root = Path(os.path.realpath(workspace))
    engine, _ = make_engine(root, extra_tools=[EditFileTool(root), ApplyPatchTool(root), GrepTool(root)])
    return engine


def put(workspace: Path, name: str, data: bytes) -> Path:
    path = workspace / name
    path.write_bytes(data)
    return path


# --------------------------------------------------------------------------- reading


def test_cp1252_csv_reads_decoded_with_its_encoding_named(workspace: Path) -> None:
    put(workspace, "prices.csv", CSV.encode("cp1252"))
    result = engine_on(workspace).execute_tool_call("read_file", {"path": "prices.csv"})
    assert result.success, result.error
    assert result.output == CSV + NOTE.format("cp1252")


def test_latin1_reads_as_cp1252_which_decodes_it_alike(workspace: Path) -> None:
    text = "Le café est prêt.\nC'est l'été à Genève.\n"
    put(workspace, "note.txt", text.encode("latin-1"))
    result = engine_on(workspace).execute_tool_call("read_file", {"path": "note.txt"})
    assert result.output == text + NOTE.format("cp1252")


def test_python_cookie_decides_and_is_named(workspace: Path) -> None:
    source = "# -*- coding: latin-1 -*-\nNAME = 'élève'\n"
    put(workspace, "old.py", source.encode("latin-1"))
    result = engine_on(workspace).execute_tool_call("read_file", {"path": "old.py"})
    assert result.output == source + NOTE.format("latin-1")
    assert decode_text(source.encode("latin-1"), "old.py").encoding == "iso8859-1"
    # A cookie that names an unknown encoding is no cookie (tokenize refuses it): detection decides.
    unknown = "# -*- coding: klingon -*-\nNOTE = 'Le café est prêt, à Genève.'\n"
    assert decode_text(unknown.encode("latin-1"), "odd.py").encoding == "cp1252"


def test_utf8_and_utf16_files_get_no_note(workspace: Path) -> None:
    put(workspace, "bom8.txt", codecs.BOM_UTF8 + "café\r\n".encode())
    put(workspace, "bom16.txt", codecs.BOM_UTF16_LE + "café\r\n".encode("utf-16-le"))
    engine = engine_on(workspace)
    assert engine.execute_tool_call("read_file", {"path": "bom8.txt"}).output == "café\r\n"
    assert engine.execute_tool_call("read_file", {"path": "bom16.txt"}).output == "café\r\n"


def test_partial_read_of_a_large_cp1252_file(workspace: Path) -> None:
    lines = [f"{i};“Widget {i}”;{i},50 €;très bon\n" for i in range(1, 20_001)]
    put(workspace, "big.csv", "".join(lines).encode("cp1252"))
    result = engine_on(workspace).execute_tool_call(
        "read_file", {"path": "big.csv", "offset": 500, "limit": 2}
    )
    assert result.success, result.error
    assert result.output.startswith(lines[499] + lines[500] + "[... showing lines 500-501 of 20000")
    assert result.output.endswith(NOTE.format("cp1252"))


def test_partial_read_of_a_huge_legacy_file_says_what_to_do(workspace: Path) -> None:
    put(workspace, "huge.csv", ("caf\xe9;" * 100 + "\n").encode("cp1252") * 5000)  # ~3 MB
    result = engine_on(workspace).execute_tool_call(
        "read_file", {"path": "huge.csv", "offset": 1, "limit": 1}
    )
    assert (
        not result.success
        and "too large to detect" in (result.error or "")
        and "iconv" in (result.error or "")
    )


def test_ambiguous_bytes_are_refused_naming_the_candidates(workspace: Path) -> None:
    data = "Привет\n".encode("cp1251")  # too short for the detector to be sure of anything
    target = put(workspace, "short.txt", data)
    engine = engine_on(workspace)
    result = engine.execute_tool_call("read_file", {"path": "short.txt"})
    assert not result.success
    error = result.error or ""
    assert "cannot be told for sure" in error and "iconv" in error
    assert error.count("('") >= 2  # at least two readings, each with how the line reads in it
    edit = engine.execute_tool_call("edit_file", {"path": "short.txt", "old_str": "\n", "new_str": "x\n"})
    assert not edit.success and "for sure" in (edit.error or "")
    assert target.read_bytes() == data


def test_binary_is_still_refused(workspace: Path) -> None:
    put(workspace, "blob.bin", b"\x89PNG\r\n\x1a\n\x00\x00\xe9\x80")
    engine = engine_on(workspace)
    for call in ({"path": "blob.bin"}, {"path": "blob.bin", "offset": 1}):
        result = engine.execute_tool_call("read_file", call)
        assert not result.success and "binary" in (result.error or "")


# --------------------------------------------------------------------------- searching


@pytest.mark.parametrize("rg_walk", [True, False])
def test_grep_shows_legacy_lines_decoded_with_every_backend(workspace: Path, rg_walk: bool) -> None:
    put(workspace, "prices.csv", CSV.encode("cp1252"))
    put(workspace, "old.py", "# -*- coding: latin-1 -*-\nNAME = 'élève'  # TODO\n".encode("latin-1"))
    outputs = {
        name: GrepTool(workspace, backend=name, rg_walk=rg_walk).execute(pattern="TODO").output  # type: ignore[arg-type]
        for name in INSTALLED
    }
    assert set(outputs.values()) == {"old.py:2: NAME = 'élève'  # TODO"}, outputs
    prices = {
        name: GrepTool(workspace, backend=name, rg_walk=rg_walk).execute(pattern="Widget").output  # type: ignore[arg-type]
        for name in INSTALLED
    }
    assert set(prices.values()) == {"prices.csv:2: “Widget”;12,50 €;it’s fine"}, prices
    assert "\ufffd" not in "".join(prices.values())


def test_grep_on_ambiguous_bytes_falls_back_to_replacement_characters(workspace: Path) -> None:
    put(workspace, "short.txt", "Привет TODO\n".encode("cp1251"))
    for name in INSTALLED:
        result = GrepTool(workspace, backend=name).execute(pattern="TODO")  # type: ignore[arg-type]
        assert result.success and result.output.endswith(" TODO") and "short.txt:1:" in result.output


# --------------------------------------------------------------------------- changing


def test_edit_cp1252_keeps_every_other_byte_and_crlf(workspace: Path) -> None:
    before = CSV.encode("cp1252")
    target = put(workspace, "prices.csv", before)
    result = engine_on(workspace).execute_tool_call(
        "edit_file", {"path": "prices.csv", "old_str": "3,00 €", "new_str": "3,50 € “neu”"}
    )
    assert result.success, result.error
    old, new = "3,00 €".encode("cp1252"), "3,50 € “neu”".encode("cp1252")
    assert target.read_bytes() == before.replace(old, new)
    edit = engine_on(workspace).execute_tool_call(
        "edit_file",
        {"path": "prices.csv", "old_str": "name;price;note\n", "new_str": "name;price;note\nà;1 €;x\n"},
    )
    assert edit.success, edit.error
    assert target.read_bytes().startswith(b"name;price;note\r\n\xe0;1 \x80;x\r\n")  # CRLF kept


def test_unencodable_insertion_is_refused_naming_the_character(workspace: Path) -> None:
    before = CSV.encode("cp1252")
    target = put(workspace, "prices.csv", before)
    engine = engine_on(workspace)
    result = engine.execute_tool_call(
        "edit_file", {"path": "prices.csv", "old_str": "très bon", "new_str": "très bon → 5★"}
    )
    assert not result.success
    error = result.error or ""
    assert "'→' (U+2192) on line 3" in error and "cp1252" in error and "unchanged" in error
    patch = "--- a/prices.csv\n+++ b/prices.csv\n@@ -1 +1 @@\n-name;price;note\n+name;price;note ✓\n"
    refused = engine.execute_tool_call("apply_patch", {"path": "prices.csv", "patch": patch})
    assert not refused.success and "U+2713" in (refused.error or "")
    overwrite = engine.execute_tool_call("write_file", {"path": "prices.csv", "content": "ok\nПривет\n"})
    assert (
        not overwrite.success and "U+041F" in (overwrite.error or "") and "line 2" in (overwrite.error or "")
    )
    assert target.read_bytes() == before


def test_cookie_encoding_refuses_what_it_cannot_store(workspace: Path) -> None:
    before = "# -*- coding: latin-1 -*-\nPRICE = '12 €'\n".replace("€", "EUR").encode("latin-1")
    target = put(workspace, "old.py", before)
    result = engine_on(workspace).execute_tool_call(
        "edit_file", {"path": "old.py", "old_str": "EUR", "new_str": "€"}
    )
    assert not result.success and "U+20AC" in (result.error or "") and "latin-1" in (result.error or "")
    assert target.read_bytes() == before


def test_apply_patch_writes_back_in_the_files_encoding(workspace: Path) -> None:
    before = CSV.encode("cp1252")
    target = put(workspace, "prices.csv", before)
    patch = (
        "--- a/prices.csv\n+++ b/prices.csv\n@@ -2,2 +2,2 @@\n"
        " “Widget”;12,50 €;it’s fine\n-Café crème;3,00 €;très bon – ok\n+Café crème;3,20 €;très bon – ok\n"
    )
    result = engine_on(workspace).execute_tool_call("apply_patch", {"path": "prices.csv", "patch": patch})
    assert result.success, result.error
    assert target.read_bytes() == before.replace(b"3,00", b"3,20")


def test_write_file_overwrite_keeps_encoding_bom_and_crlf(workspace: Path) -> None:
    legacy = put(workspace, "prices.csv", CSV.encode("cp1252"))
    wide = put(workspace, "wide.txt", codecs.BOM_UTF16_LE + "a\r\nb\r\n".encode("utf-16-le"))
    engine = engine_on(workspace)
    assert engine.execute_tool_call("write_file", {"path": "prices.csv", "content": "a;€\nb;é\n"}).success
    assert legacy.read_bytes() == b"a;\x80\r\nb;\xe9\r\n"
    assert engine.execute_tool_call("write_file", {"path": "wide.txt", "content": "x\n✓\n"}).success
    assert wide.read_bytes() == codecs.BOM_UTF16_LE + "x\r\n✓\r\n".encode("utf-16-le")


def test_write_file_over_an_undecidable_file_writes_utf8(workspace: Path) -> None:
    target = put(workspace, "short.txt", "Привет\n".encode("cp1251"))
    assert (
        engine_on(workspace)
        .execute_tool_call("write_file", {"path": "short.txt", "content": "Привет\n"})
        .success
    )
    assert target.read_bytes() == "Привет\n".encode()


def test_utf16_edit_keeps_bom_and_crlf(workspace: Path) -> None:
    target = put(workspace, "wide.txt", codecs.BOM_UTF16_BE + "one\r\ntwo\r\n".encode("utf-16-be"))
    result = engine_on(workspace).execute_tool_call(
        "edit_file", {"path": "wide.txt", "old_str": "two\n", "new_str": "zwei €\nthree\n"}
    )
    assert result.success, result.error
    assert target.read_bytes() == codecs.BOM_UTF16_BE + "one\r\nzwei €\r\nthree\r\n".encode("utf-16-be")


# --------------------------------------------------------------------------- properties and hostile input

LEGACY_TEXT = st.text(st.sampled_from("abc xyz;,0129éèàüßÄÖ€“”’–\r\n"), max_size=200)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    encoding=st.sampled_from(["cp1252", "latin-1"]),
    head=LEGACY_TEXT,
    tail=LEGACY_TEXT,
    new=st.text(st.sampled_from("qrs éß€\n"), max_size=30),
)
def test_an_edit_changes_only_the_bytes_of_its_span(encoding: str, head: str, tail: str, new: str) -> None:
    head, tail = (
        t if encoding == "cp1252" else t.translate(str.maketrans("€“”’–", 'e""\'-')) for t in (head, tail)
    )
    if encoding == "latin-1":
        new = new.replace("€", "e")
    marker = "<<MARKER>>"
    text = f"# -*- coding: {encoding} -*-\n{head}{marker}{tail}"
    before = text.encode(encoding)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        target = root / "f.py"
        target.write_bytes(before)
        result = EditFileTool(root).execute(path="f.py", old_str=marker, new_str=new + "!")
        after = target.read_bytes()
    assert result.success, result.error
    start = before.index(marker.encode())
    replaced = after[start : len(after) - (len(before) - start - len(marker))]
    assert after[:start] == before[:start]
    assert after[start + len(replaced) :] == before[start + len(marker) :]
    assert replaced.replace(b"\r\n", b"\n") == (new + "!").encode(encoding).replace(b"\r\n", b"\n")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=600), name=st.sampled_from(["x.txt", "x.py", "x.csv"]))
def test_any_bytes_decode_or_are_refused_clearly(data: bytes, name: str) -> None:
    try:
        file = decode_text(data, name)
    except FileAccessError as exc:
        assert str(exc).startswith(f"'{name}'")
    else:
        assert file.encode(file.text) == data  # whatever is read is written back byte for byte


@pytest.mark.parametrize(
    "data",
    [
        b"# -*- coding: no-such-codec -*-\n\xe9\n",
        b"# coding: utf-7\nx = 1\n",
        b"# vim: set fileencoding=iso2022_jp :\nx\n",
        b"\xe9" * 100_000,
        b"\x80\x81\x8d\x8f\x90\x9d" * 5000,
        ("“€”" * 300_000 + "\n").encode("cp1252"),
    ],
)
def test_hostile_and_huge_input_never_raises(workspace: Path, data: bytes) -> None:
    for name in ("h.py", "h.txt"):
        put(workspace, name, data)
        engine = engine_on(workspace)
        for tool, args in (
            ("read_file", {"path": name}),
            ("read_file", {"path": name, "offset": 1, "limit": 1}),
            ("edit_file", {"path": name, "old_str": "x", "new_str": "y"}),
            ("grep", {"pattern": "x"}),
        ):
            result = engine.execute_tool_call(tool, args)
            assert result.success or (result.error and "unexpectedly" not in result.error), (
                tool,
                result.error,
            )
