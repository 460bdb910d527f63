"""The engines agree: rg, grep and Python for grep; rg-prefiltered, full, worker and in-process `re`."""

from __future__ import annotations

import codecs
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pathspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.tools.filesystem import fileio
from architect_nb.tools.search import scan as scan_module
from architect_nb.tools.search.code import prefilter_args
from architect_nb.tools.search.grep import BACKENDS, Needle, PythonBackend, make_backend, searchable
from architect_nb.tools.search.literals import CASE_FOLD_POOL, Needles, required_needles
from architect_nb.tools.search.programs import find_rg
from architect_nb.tools.search.search_tools import GrepTool, SearchCodeTool
from architect_nb.tools.search.translate import rg_superset
from architect_nb.tools.tree.walk import _Spec, scan, walk

INSTALLED = [name for name in BACKENDS if make_backend(name) is not None]
# Characters whose case variants differ between naive folding schemes, plus regex and shell specials.
TRICKY = "aAkKsSiIéÉßẞſKİıΣσς .*()[\\-:"


#: How a text file may be stored; grep reads each as rg does (see `rg_view`).
ENCODINGS = {
    "utf-8": lambda text: text.encode("utf-8"),
    "utf-8 BOM": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16-le BOM": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    "utf-16-be BOM": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
}


def write_files(root: Path, contents: list[str], encodings: list[str] | None = None) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(contents):
        encoding = encodings[i % len(encodings)] if encodings else "utf-8"
        (root / f"f{i}.txt").write_bytes(ENCODINGS[encoding](text))


def test_rg_is_found_without_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    find_rg.cache_clear()
    try:
        rg = find_rg()
        assert rg is not None and os.path.dirname(rg) == os.path.dirname(sys.executable)
    finally:
        find_rg.cache_clear()


def test_rg_and_grep_are_installed_here() -> None:
    # CI must exercise every backend: rg comes with the ripgrep wheel, grep with the OS.
    assert INSTALLED == ["rg", "grep", "python"]


IGNORE_RULES = "out/\n*.log\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    needle=st.text(alphabet=TRICKY, min_size=1, max_size=3),
    contents=st.lists(st.text(alphabet=TRICKY + "\n\r", max_size=40), min_size=1, max_size=3),
    case_sensitive=st.booleans(),
    encodings=st.lists(st.sampled_from(sorted(ENCODINGS)), min_size=1, max_size=3),
    path=st.sampled_from([".", "out", "out/raw"]),
)
def test_grep_backends_agree(
    needle: str, contents: list[str], case_sensitive: bool, encodings: list[str], path: str
) -> None:
    """Same output from every backend, in any encoding, from the top or a named ignored folder."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        (root / ".gitignore").write_text(IGNORE_RULES)
        write_files(root, contents, encodings)
        write_files(root / "out" / "raw", contents, encodings[::-1])
        (root / "out" / "raw" / "f.log").write_text(TRICKY)
        results = {
            name: GrepTool(root, backend=name).execute(
                pattern=needle, path=path, case_sensitive=case_sensitive
            )
            for name in INSTALLED
        }
    outputs = {name: result.output for name, result in results.items()}
    assert len(set(outputs.values())) == 1, outputs
    searched = {result.metadata["files_searched"] for result in results.values()}
    # From the top: the top files and .gitignore; in out/raw (ignored, named): its files but not f.log.
    assert searched == {len(contents) + (path == ".")}
    if case_sensitive:  # the count a reader of the decoded text would give
        texts = [*contents, IGNORE_RULES] if path == "." else contents
        expected = sum(needle in line for text in texts for line in text.split("\n"))
        assert results["python"].metadata.get("matches", 0) == expected


@pytest.mark.parametrize("backend", INSTALLED)
def test_case_insensitive_grep_folds_case_variants_only(tmp_path: Path, backend: str) -> None:
    (tmp_path / "a.txt").write_text("Élan\nélan\nKelvin \u212a\nstraße STRASSE\n")
    tool = GrepTool(tmp_path, backend=backend)  # type: ignore[arg-type]
    assert tool.execute(pattern="ÉLAN", case_sensitive=False).metadata["matches"] == 2
    assert tool.execute(pattern="k", case_sensitive=False).output == "a.txt:3: Kelvin \u212a"
    assert tool.execute(pattern="\u212a", case_sensitive=False).metadata["matches"] == 1
    assert tool.execute(pattern="STRASSE", case_sensitive=False).output == "a.txt:4: straße STRASSE"


def test_case_fold_pool_is_complete() -> None:
    ascii_letter = re.compile(r"[a-z]", re.IGNORECASE)
    folding = {chr(c) for c in range(0x80, 0x110000) if ascii_letter.fullmatch(chr(c))}
    assert folding <= set(CASE_FOLD_POOL)


def test_scan_binary_rule_is_fileio_rule() -> None:
    for head in [b"", b"abc", b"a\x00b", b"\xff\xfea\x00", b"x" * 9000 + b"\x00", b"\xfe\xff\x00a"]:
        assert scan_module.looks_binary(head) == fileio.looks_binary(head)


# --------------------------------------------------------------------------- literal prefilter

_atoms = st.sampled_from(
    [
        "a",
        "b",
        "k",
        "s",
        "i",
        "é",
        "ab",
        "ki",
        r"\w",
        ".",
        "[ab]",
        r"\s",
        r"\n",
        "(?i:ks)",
        "(?=ab)",
        "(?<=b)",
    ]
)


def _regex(depth: int = 2) -> st.SearchStrategy[str]:
    leaf = st.lists(_atoms, min_size=1, max_size=4).map("".join)
    if depth == 0:
        return leaf
    inner = _regex(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(inner, inner).map("|".join),
        st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "+?"])).map(lambda p: f"(?:{p[0]}){p[1]}"),
        st.tuples(leaf, inner, leaf).map(lambda p: f"{p[0]}({p[1]}){p[2]}"),
    )


def _as_python(needles: Needles) -> re.Pattern[str]:
    """The prefilter's rg arguments, read back as a Python regex with the same meaning."""
    args = needles.rg_args()
    patterns = [args[i + 1] for i, arg in enumerate(args) if arg == "-e"]
    if "-F" in args:
        return re.compile("|".join(map(re.escape, patterns)))
    as_python = (re.sub(r"\\x\{([0-9A-F]+)\}", lambda m: re.escape(chr(int(m[1], 16))), p) for p in patterns)
    return re.compile("|".join(as_python))


@settings(max_examples=300, deadline=None)
@given(
    pattern=_regex(),
    ignore_case=st.booleans(),
    text=st.text(alphabet="abkKsSiIéÉ\u212a\u017f\u0130\u0131 \n", max_size=30),
)
def test_prefilter_never_drops_a_matching_file(pattern: str, ignore_case: bool, text: str) -> None:
    pattern = ("(?i)" if ignore_case else "") + pattern
    needles = required_needles(pattern, re.MULTILINE)
    if needles is not None and re.search(pattern, text, re.MULTILINE):
        assert _as_python(needles).search(text), (pattern, needles, text)


def test_prefilter_picks_distinctive_literals() -> None:
    assert required_needles(r"def\s+\w*zzz\w*") == Needles(("zzz",), False)
    assert required_needles(r"\b(numpy|pandas)\b") == Needles(("numpy", "pandas"), False)
    assert required_needles(r"(?i)Hello\s+World") == Needles(("Hello",), True)
    assert required_needles(r"\w+\d") is None
    assert required_needles(r"(foo)?bar|baz") == Needles(("bar", "baz"), False)


def test_prefilter_with_real_rg_keeps_case_folded_files(tmp_path: Path) -> None:
    texts = ["kelvin \u212a\n", "lower ı\n", "upper İ\n", "long ſ\n", "nothing\n"] + ["x\n"] * 20
    write_files(tmp_path, texts)
    tool = SearchCodeTool(tmp_path)
    for pattern, expected in [("(?i)k ", 0), ("(?i)\u212a", 1), ("(?i)i", 3), ("(?i) s", 1)]:
        with_rg = tool.execute(pattern=pattern, file_pattern="*", context_lines=0)
        plain = SearchCodeTool(tmp_path, use_rg=False).execute(
            pattern=pattern, file_pattern="*", context_lines=0
        )
        assert with_rg.output == plain.output
        assert with_rg.metadata.get("matches", 0) >= expected


def _tree(root: Path) -> None:
    for i in range(40):
        folder = root / f"pkg{i % 4}"
        folder.mkdir(exist_ok=True)
        body = f"def func_{i}(x):\n    return x * {i}  # marker{i % 7}\n" * 3
        (folder / f"m{i}.py").write_text(body)
    (root / "pkg0" / "u16.py").write_bytes(b"\xff\xfe" + "def func_u16(x): marker3\n".encode("utf-16-le"))
    (root / "pkg0" / "bom.py").write_bytes(b"\xef\xbb\xbfdef func_bom(x): marker3\n")


@pytest.mark.parametrize(
    "pattern",
    [
        r"marker3",
        r"def func_\d+\(",
        r"(?i)MARKER[35]",
        r"return x \* 1\d",
        r"^def func_bom",
        r"x\):\n\s+return",
    ],
)
def test_search_code_engines_agree(tmp_path: Path, pattern: str) -> None:
    _tree(tmp_path)
    kwargs = {"pattern": pattern, "context_lines": 1, "max_results": 500}
    prefiltered = SearchCodeTool(tmp_path).execute(**kwargs)
    full = SearchCodeTool(tmp_path, use_rg=False).execute(**kwargs)
    in_process = SearchCodeTool(tmp_path, in_process=True).execute(**kwargs)
    assert prefiltered.success and prefiltered.metadata["matches"] > 0
    assert prefiltered.output == full.output == in_process.output


# --------------------------------------------------------------------------- walk


_SAMPLE_RULES = ["*.py", "!keep.py", "build/", "/top", "a/**/b", "*.log", "!*.log", "[ab]*", "c?", "\\#x"]


@settings(max_examples=200, deadline=None)
@given(
    rules=st.lists(
        st.sampled_from([*_SAMPLE_RULES, "*/", "**"]),  # the last two are not anchored
        min_size=1,
        max_size=4,
    ),
    path=st.lists(
        st.sampled_from(["a", "b", "build", "keep.py", "x.log", "c1", "top", "#x"]), min_size=1, max_size=4
    ),
    is_dir=st.booleans(),
)
def test_gitignore_shortcut_gives_pathspecs_answer(rules: list[str], path: list[str], is_dir: bool) -> None:
    spec = pathspec.GitIgnoreSpec.from_lines(rules)
    rel = "/".join(path) + ("/" if is_dir else "")
    expected = spec.check_file(rel).include
    assert _Spec(spec).verdict(rel) == (None if expected is None else bool(expected))


def test_scan_and_walk_agree_on_a_real_tree() -> None:
    root = Path(os.path.realpath(Path(__file__).parents[3]))
    entries = [(str(e.path), e.rel, e.is_dir, e.is_symlink) for e in walk(root, root, include_dirs=True)]
    scanned = [
        (p, rel, kind == "dir", kind == "link") for p, rel, kind in scan(root, root, include_dirs=True)
    ]
    assert entries == scanned
    assert not any(rel.startswith((".git/", ".venv/")) or "__pycache__" in rel for _p, rel, _d, _l in entries)


def test_worker_survives_a_bad_request_and_stops_at_exit(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x\n")
    code = (
        f"target = {str(tmp_path / 'x.txt')!r}\n"
        "from architect_nb.tools.search.workers import run_scan\n"
        "r = run_scan({'pattern': '(', 'flags': 0, 'files': [(0, target)], 'context': 0, 'max_lines': 1,"
        " 'max_bytes': 1}, 5)\n"
        "print(r.error)\n"
        "r = run_scan({'pattern': 'x', 'flags': 0, 'files': [(0, target)], 'context': 0, 'max_lines': 1,"
        " 'max_bytes': 10**6}, 5)\n"
        "print(r.files_done, r.error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.splitlines()[0].startswith("error: missing )")
    assert out.stdout.splitlines()[1] == "1 None"
    assert out.stderr == ""


def test_needle_forms_match_the_same_text() -> None:
    needle = Needle("Σa.", ignore_case=True)
    assert needle.python.search("σA.".encode())
    assert needle.ere.count(b"\\.") == 1
    assert "\\x{3A3}" in needle.rg_regex


def test_prefilter_is_used_and_rules_files_out(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = SearchCodeTool(tmp_path).execute(pattern=r"marker3\b", max_results=500)
    full = SearchCodeTool(tmp_path, use_rg=False).execute(pattern=r"marker3\b", max_results=500)
    assert result.metadata["files_read"] < full.metadata["files_read"] == result.metadata["files_searched"]
    assert result.output == full.output


def test_two_workers_split_a_big_scan_and_keep_file_order(tmp_path: Path) -> None:
    for i in range(260):
        (tmp_path / f"m{i:03}.py").write_text(f"value_{i} = {i}\n" + "pad\n" * (i % 5))
    kwargs = {"pattern": r"^\w+_\d*7 =", "context_lines": 1, "max_results": 10}
    split = SearchCodeTool(tmp_path, use_rg=False).execute(**kwargs)  # no literal: every file is read
    single = SearchCodeTool(tmp_path, use_rg=False, in_process=True).execute(**kwargs)
    assert split.output == single.output
    assert split.output.splitlines()[0] == "m007.py:1: value_7 = 7"
    assert split.metadata["matches"] == 26 and split.metadata["files_read"] == 260


@pytest.mark.parametrize("kind", ["symlink", "fifo", "hardlink"])
def test_readers_refuse_what_the_walk_never_offers(tmp_path: Path, kind: str) -> None:
    """Between the walk and the read a file may be swapped; the readers still never follow or block."""
    target = tmp_path / "real.txt"
    target.write_text("TOP-SECRET\n")
    path = tmp_path / "swapped.txt"
    if kind == "symlink":
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        os.link(target, path)
    assert scan_module.read_regular(str(path), 10**6) is None
    assert not searchable(str(path))
    assert PythonBackend().counts(str(tmp_path), [path.name], Needle("TOP", False), 1e18) == ({}, 1)


_twin_atoms = st.sampled_from(
    [
        *("a", "b", "é", "K", r"\d", "[0-9]", "[a-c]", "[^a]", ".", r"\n", r"\w", r"\s", r"\W", "(?i:k)"),
        *("(?s:.)", "\ufffd", r"\b", "^", "$", "(?=a)", "[é-ë]", "(?:ab){2}", "a*?", r"\d+", ".{0,40}"),
        *("a{0,33}", "(?s:.){3,20}"),
    ]
)
_file_bytes = st.lists(
    st.sampled_from([b"a", b"b", b"k", b"K", "é".encode(), b"\xe9", b"\xff", b"0", "\u0663".encode(), b"\n"])
    | st.sampled_from([b" ", "\u212a".encode(), "\ufffd".encode(), b"ab", b"\r\n"]),
    max_size=12,
).map(b"".join)


def _twin_regex(depth: int = 2) -> st.SearchStrategy[str]:
    leaf = st.lists(_twin_atoms, min_size=1, max_size=4).map("".join)
    if depth == 0:
        return leaf
    inner = _twin_regex(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(inner, inner).map("|".join),
        st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{1,3}"])).map(lambda p: f"(?:{p[0]}){p[1]}"),
        st.tuples(leaf, inner, leaf).map(lambda p: f"{p[0]}({p[1]}){p[2]}"),
        inner.map(lambda p: f"(?i){p}"),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=_twin_regex(), contents=st.lists(_file_bytes, min_size=1, max_size=4))
def test_rg_prefilter_keeps_every_file_re_matches(pattern: str, contents: list[bytes]) -> None:
    """The real rg, with the real prefilter arguments (a literal or the regex's looser twin)."""
    args = prefilter_args(pattern)
    if args is None:
        return
    rg = find_rg()
    assert rg is not None
    with tempfile.TemporaryDirectory() as tmp:
        names = [f"f{i}.txt" for i in range(len(contents))]
        for name, data in zip(names, contents, strict=True):
            Path(tmp, name).write_bytes(data)
        out = subprocess.run(
            [rg, "--no-config", "--no-messages", "-a", "-s", "-l", "--null", *args, "--", *names],
            cwd=tmp,
            capture_output=True,
            check=False,
        )
    assert out.returncode in (0, 1), out.stderr
    kept = {name.decode() for name in out.stdout.split(b"\x00") if name}
    regex = re.compile(pattern, re.MULTILINE)
    for name, data in zip(names, contents, strict=True):
        if data and regex.search(scan_module.decode(data)):  # the scan skips empty files
            assert name in kept, (pattern, args, data)


def test_twin_is_exact_where_it_can_be() -> None:
    assert rg_superset(r"[A-Z]{3}\d{3}") == r"(?:[\x{41}-\x{5A}]){3,3}(?:[\d]){3,3}"
    assert rg_superset(r"(a)\1") is None  # backreference: no twin
    assert rg_superset(r"^\s+$") is None  # nothing exact left: not worth an rg pass
    assert prefilter_args(r"def \w+") == ["-F", "-e", "def "]
    assert prefilter_args(r"[0-9]{4}_?\d\d") == [
        "-U",
        "-e",
        r"(?:[\x{30}-\x{39}]){4,4}(?:\x{5F}){0,1}[\d][\d]",
    ]


def test_a_slow_twin_is_abandoned_for_a_full_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.tools.search import code

    _tree(tmp_path)
    monkeypatch.setattr(code, "_TWIN_BUDGET", 0.0)
    result = SearchCodeTool(tmp_path).execute(pattern=r"[0-9]{2}[()]", max_results=500)
    full = SearchCodeTool(tmp_path, use_rg=False).execute(pattern=r"[0-9]{2}[()]", max_results=500)
    assert result.output == full.output and result.metadata["matches"] > 0
    assert result.metadata["files_read"] == full.metadata["files_read"]
    assert not result.metadata["timed_out"]


def test_a_dead_idle_worker_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.tools.search import workers

    (tmp_path / "a.py").write_text("hit\n")
    tool = SearchCodeTool(tmp_path)
    assert tool.execute(pattern="hit").output == "a.py:1: hit"
    for worker in workers._idle:
        worker.proc.kill()
        worker.proc.wait()
    monkeypatch.setattr(workers._Worker, "alive", lambda self: True)  # as if it died after the check
    assert tool.execute(pattern="hit").output == "a.py:1: hit"
