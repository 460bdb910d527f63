"""search_code and grep read notebooks by cell: `path [cell 3, line 2]: text`, never JSON lines; outputs only
when asked. Every grep backend gives the same answer."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from architect_nb.tools.search.grep import BACKENDS, BackendName, make_backend
from architect_nb.tools.search.search_tools import GrepTool, SearchCodeTool
from tests.support.notebooks import write_v44, write_v45


@pytest.fixture
def tree(workspace: Path) -> Path:
    write_v45(workspace / "nb45.ipynb")
    (workspace / "sub").mkdir()
    write_v44(workspace / "sub" / "nb44.ipynb")
    (workspace / "geometry.py").write_text('def area(r):\n    print("area", r)\n')
    return workspace


def grep(root: Path, backend: BackendName, **args: object) -> str:
    if make_backend(backend) is None:
        pytest.skip(f"{backend} is not installed")
    result = GrepTool(root, backend=backend).execute(**args)
    assert result.success, result.error
    return result.output


@pytest.mark.parametrize("backend", BACKENDS)
def test_grep_reports_notebook_matches_by_cell(tree: Path, backend: BackendName) -> None:
    # The quotes are escaped in the JSON (\"area\"), so a search of the raw file would miss these.
    assert grep(tree, backend, pattern='print("area"').splitlines() == [
        'geometry.py:2:     print("area", r)',
        'nb45.ipynb [cell 1, line 6]: print("area", area(2))',
        'sub/nb44.ipynb [cell 1, line 6]: print("area", area(2))',
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_grep_searches_outputs_only_when_asked(tree: Path, backend: BackendName) -> None:
    assert grep(tree, backend, pattern="12.566").startswith("No matches for '12.566'")
    assert grep(tree, backend, pattern="12.566", include_outputs=True).splitlines() == [
        "nb45.ipynb [cell 1, output 0, line 1]: area 12.566370614359172",
        "sub/nb44.ipynb [cell 1, output 0, line 1]: area 12.566370614359172",
    ]
    # Never the image: its base64 is not text to search.
    assert "image/png" not in grep(tree, backend, pattern="iVBOR", include_outputs=True)
    errors = grep(tree, backend, pattern="ValueError", include_outputs=True, path="nb45.ipynb")
    assert "nb45.ipynb [cell 3, output 0, line 1]: ValueError: bad input" in errors.splitlines()


def test_grep_ignoring_case_and_max_results(tree: Path) -> None:
    out = GrepTool(tree).execute(pattern="ÁREAS", case_sensitive=False, max_results=1).output
    assert out.splitlines() == [
        "nb45.ipynb [cell 0, line 1]: # Áreas — análisis",
        "... 1 more match in 1 file; narrow the pattern or path.",
    ]


def test_search_code_reports_by_cell_with_context(tree: Path) -> None:
    result = SearchCodeTool(tree, in_process=True).execute(pattern=r"^def area", context_lines=1)
    assert result.success
    assert result.output.splitlines() == [
        "geometry.py:1: def area(r):",
        'geometry.py-2-     print("area", r)',
        "--",
        "nb45.ipynb [cell 1, line 2]- ",
        "nb45.ipynb [cell 1, line 3]: def area(r):",
        "nb45.ipynb [cell 1, line 4]-     return math.pi * r ** 2",
        "--",
        "sub/nb44.ipynb [cell 1, line 2]- ",
        "sub/nb44.ipynb [cell 1, line 3]: def area(r):",
        "sub/nb44.ipynb [cell 1, line 4]-     return math.pi * r ** 2",
    ]


def test_search_code_outputs_only_when_asked(tree: Path) -> None:
    tool = SearchCodeTool(tree)
    assert tool.execute(pattern=r"area \d+\.\d+").output.startswith("No matches")
    out = tool.execute(pattern=r"area \d+\.\d+", include_outputs=True, context_lines=0).output.splitlines()
    assert out == [
        "nb45.ipynb [cell 1, output 0, line 1]: area 12.566370614359172",
        "sub/nb44.ipynb [cell 1, output 0, line 1]: area 12.566370614359172",
    ]


def test_search_code_keeps_notebooks_past_the_rg_prefilter(workspace: Path) -> None:
    """With enough files rg rules some out first; it reads JSON, so notebooks must never be ruled out."""
    for i in range(40):
        (workspace / f"m{i:02}.py").write_text(f"value_{i} = {i}\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('name = "quoted \\\\ path"')])
    nbformat.write(nb, workspace / "q.ipynb")
    out = SearchCodeTool(workspace).execute(pattern=r'"quoted \\\\ path"').output
    assert out == 'q.ipynb [cell 0, line 1]: name = "quoted \\\\ path"'


def test_a_file_named_ipynb_that_is_not_a_notebook_is_searched_as_text(workspace: Path) -> None:
    (workspace / "fake.ipynb").write_text("not json, needle here\n")
    assert GrepTool(workspace).execute(pattern="needle").output == "fake.ipynb:1: not json, needle here"
    code = SearchCodeTool(workspace, in_process=True).execute(pattern="needle").output
    assert code == "fake.ipynb:1: not json, needle here"
