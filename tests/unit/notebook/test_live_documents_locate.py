"""The kernel's `DocumentChannel` with several front ends. `locate` (the notebook of the running
`%%architect` cell, by the cell's id) when notebooks copied from one template share their cell ids: it never
guesses, so the run reads its notebook's file. And a claim when a collaborator's tab is gone without a word.

The channel is the kernel's real `DocumentChannel`; each front end is a comm answered by `OpenNotebooks`
(the package's stand-in, speaking the channel's JSON as the labextension does) or, for an older extension,
by an answer written out here.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from architect_nb.notebook.context import KernelFacts, find_notebook
from architect_nb.notebook.kernel.live_documents import DocumentChannel
from architect_nb.testing.open_notebooks import OpenNotebooks

CELL = "arch"  # the running %%architect cell's id, in both copies of the template
EXAM_POLICY = {"teaching": {"mode": "off", "message": "No assistant in this exam."}}
_ids = itertools.count(1)


class _Comm:
    """A front end's comm: the kernel's requests are answered at once by `answer`."""

    def __init__(self, answer: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        self.comm_id = f"comm-{next(_ids)}"
        self._answer = answer
        self._on_msg: Callable[[dict[str, Any]], None] | None = None

    def on_msg(self, callback: Callable[[dict[str, Any]], None]) -> None:
        self._on_msg = callback

    def on_close(self, callback: Callable[[dict[str, Any]], None]) -> None:
        pass

    def send(self, data: dict[str, Any]) -> None:
        if data.get("type") == "welcome" or self._on_msg is None:
            return
        answer = self._answer(data)
        if answer is None:  # a tab that is gone
            return
        for doc in answer.get("docs") or []:
            doc.setdefault("app", self.comm_id)  # as the extension names itself (`OpenNotebooks` does not)
        self._on_msg({"content": {"data": {**answer, "req": data["req"]}}})

    def close(self) -> None:
        pass


def _connect(
    channel: DocumentChannel, root: Path, answer: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> None:
    comm = _Comm(answer)
    data = {"type": "client", "protocol": 1, "app": comm.comm_id, "where": "JupyterLab", "root": str(root)}
    channel.on_open(comm, {"content": {"data": data}})


def _worker(call: Callable[[], Any]) -> Any:
    """As the agent asks: from a worker thread (the kernel's main thread cannot wait for an answer)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result(timeout=10)


def _locate(channel: DocumentChannel) -> Any:
    return _worker(lambda: channel.locate(CELL))


def _template(path: Path, metadata: dict[str, Any] | None = None, cell: str = CELL) -> Path:
    sources = {"setup": "%load_ext architect_nb", cell: "%%architect\nSolve it."}
    cells = [
        {"cell_type": "code", "id": i, "metadata": {}, "source": s, "outputs": [], "execution_count": None}
        for i, s in sources.items()
    ]
    data = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"architect": metadata or {}}, "cells": cells}
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return Path(os.path.realpath(tmp_path))  # as the channel resolves the server's root


@pytest.fixture
def copies(root: Path) -> tuple[Path, Path]:
    """exam.ipynb (its metadata turns the agent off) and copy.ipynb: one template, the same cell ids."""
    return _template(root / "exam.ipynb", EXAM_POLICY), _template(root / "copy.ipynb")


def _front(root: Path, *files: Path) -> OpenNotebooks:
    notebooks = OpenNotebooks()
    for file in files:
        notebooks.open(file, key=file.relative_to(root).as_posix())
    return notebooks


def test_the_cell_in_two_notebooks_on_this_kernel_is_ambiguous_and_the_notebooks_file_is_read(
    root: Path, copies: tuple[Path, Path]
) -> None:
    exam, copy = copies
    front = _front(root, copy, exam)  # both on this kernel (one connected to the other's kernel)
    assert front.answer({"type": "locate", "cell": CELL}) == {
        "type": "located",
        "docs": [],
        "ambiguous": True,
    }
    assert front.locate(CELL) is None  # the stand-in as an in-process backend, likewise
    channel = DocumentChannel()
    _connect(channel, root, front.answer)
    assert _locate(channel) is None
    # Said ambiguous, no document is taken, not even one the answer lists.
    listed = {"doc": "d0", "path": "exam.ipynb", "shared": False}
    listing = DocumentChannel()
    _connect(listing, root, lambda _request: {"type": "located", "docs": [listed], "ambiguous": True})
    assert _locate(listing) is None
    # The run then reads its notebook's file (the Jupyter server names it), and follows its metadata.
    facts = KernelFacts(cell_id=CELL, count=2, session_file=str(exam), cwd=str(root))
    found = _worker(lambda: find_notebook(facts, root, channel))
    assert found.view.origin == "file" and found.file == exam
    assert found.metadata["architect"] == EXAM_POLICY


def test_older_front_ends_that_name_different_files_are_not_guessed_between(
    root: Path, copies: tuple[Path, Path]
) -> None:
    exam, copy = copies
    # Two front ends, each with one of the copies open (neither filters by kernel, nor says ambiguous).
    channel = DocumentChannel()
    _connect(channel, root, _front(root, copy).answer)
    _connect(channel, root, _front(root, exam).answer)
    assert _locate(channel) is None

    # One front end that lists both, without the `ambiguous` field.
    def older(request: dict[str, Any]) -> dict[str, Any]:
        docs = [
            {"app": "old", "doc": f"d{n}", "path": p, "shared": False}
            for n, p in enumerate(["copy.ipynb", "exam.ipynb"])
        ]
        return {"type": "located", "docs": docs}

    alone = DocumentChannel()
    _connect(alone, root, older)
    assert _locate(alone) is None


def test_one_notebook_open_in_two_tabs_is_found(root: Path, copies: tuple[Path, Path]) -> None:
    exam = copies[0]
    channel = DocumentChannel()
    _connect(channel, root, _front(root, exam).answer)
    _connect(channel, root, _front(root, exam).answer)
    located = _locate(channel)
    assert located is not None
    live, file = located
    assert live.path == "exam.ipynb" and file == root / "exam.ipynb"
    # Read through the front end, with the exam's own metadata.
    assert live.read(running=CELL).data["metadata"]["architect"] == EXAM_POLICY
    # Another notebook open with no cell of that id changes nothing.
    other = _template(root / "other.ipynb", cell="other")
    _connect(channel, root, _front(root, other).answer)
    located = _locate(channel)
    assert located is not None and located[0].path == "exam.ipynb"


def test_a_claim_goes_through_the_tab_still_open_when_a_collaborators_tab_is_gone(root: Path) -> None:
    """Real-time collaboration: two tabs share the notebook and one is closed without closing its comm. The
    claim is not refused: the silent tab is dropped, not back within the grace, and the one still open
    answers for the shared document (the file is never written behind it)."""
    notebook = _template(root / "shared.ipynb")
    staying = OpenNotebooks(shared=True)
    staying.open(notebook, key="shared.ipynb")
    gone = OpenNotebooks(shared=True)
    gone.open(notebook, key="shared.ipynb")
    channel = DocumentChannel(timeout=0.5)
    _connect(channel, root, lambda _request: None)  # the closed tab: it never answers
    _connect(channel, root, staying.answer)
    live = _worker(lambda: channel.open_document(notebook))
    assert live is not None and live.where == "JupyterLab"
    assert len(channel.clients) == 1  # the silent one was dropped
    # A tab that is not sharing the document and does not answer still refuses the call (it may hold a copy).
    alone = DocumentChannel(timeout=0.5)
    _connect(alone, root, lambda _request: None)
    _connect(alone, root, _front(root, notebook).answer)
    with pytest.raises(Exception, match="did not answer"):
        _worker(lambda: alone.open_document(notebook))
