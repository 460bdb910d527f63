"""`python -m architect_nb provenance PATH...`: which cells and lines of notebooks the agent wrote.

For each notebook (or each notebook under a folder, such as nbgrader's `submitted/<student>/<assignment>/`),
every cell with a provenance record is compared with its source now (`record.compare`): the lines still as the
agent wrote them, and how many of the agent's lines the student changed or deleted since. A record that is not
one of ours is reported as malformed and not trusted; a file that is not a readable notebook is named and
skipped. `--json` prints the same for a grading script.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from architect_nb.provenance.record import METADATA_KEY, ProvenanceError, compare

__all__ = ["CellReport", "NotebookReport", "main", "report_paths"]

_MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024
_SKIPPED_FOLDERS = {".ipynb_checkpoints", "__pycache__", ".git", "node_modules"}
_NBGRADER_STEPS = ("submitted", "autograded", "feedback", "release", "source")


@dataclass(frozen=True, slots=True)
class CellReport:
    """One cell with a record: where it is, the agent's lines now, and what the student changed."""

    index: int
    cell_id: str | None
    agent_lines: list[int]
    lines: int
    changed: int
    deleted: int
    untouched: bool
    runs: list[dict[str, str]]
    malformed: str = ""


@dataclass(slots=True)
class NotebookReport:
    path: str
    student: str | None = None
    assignment: str | None = None
    cells: list[CellReport] = field(default_factory=list)
    cells_total: int = 0

    @property
    def agent_lines(self) -> int:
        return sum(len(cell.agent_lines) for cell in self.cells)

    @property
    def changed(self) -> int:
        return sum(cell.changed for cell in self.cells)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["agent_lines"], data["changed"] = self.agent_lines, self.changed
        data["deleted"] = sum(cell.deleted for cell in self.cells)
        return data


@dataclass(slots=True)
class Report:
    notebooks: list[NotebookReport] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


def report_paths(paths: Sequence[Path]) -> Report:
    """The report for `paths`: notebooks, and folders searched for notebooks."""
    report = Report()
    for path in paths:
        if not path.exists():
            report.skipped.append({"path": str(path), "reason": "no such file or folder"})
            continue
        for file in _files(path):
            if file.suffix.lower() != ".ipynb":
                report.skipped.append({"path": str(file), "reason": "not a notebook"})
                continue
            found = _notebook(file)
            if isinstance(found, str):
                report.skipped.append({"path": str(file), "reason": found})
            else:
                report.notebooks.append(found)
    return report


def _files(path: Path) -> Iterator[Path]:
    if not path.is_dir():
        yield path
        return
    for folder, folders, files in os.walk(path):
        folders[:] = sorted(f for f in folders if f not in _SKIPPED_FOLDERS and not f.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(folder) / name


def _notebook(file: Path) -> NotebookReport | str:
    """The notebook's report, or why it was skipped."""
    try:
        if file.stat().st_size > _MAX_NOTEBOOK_BYTES:
            return f"over {_MAX_NOTEBOOK_BYTES // 1024 // 1024} MB"
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read ({exc})"
    except (ValueError, RecursionError):
        return "not valid JSON"
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return "not a notebook (no list of cells)"
    student, assignment = _nbgrader_names(file)
    report = NotebookReport(str(file), student, assignment, cells_total=len(cells))
    for index, cell in enumerate(cells):
        if isinstance(cell, dict) and (found := _cell(index, cell)) is not None:
            report.cells.append(found)
    return report


def _cell(index: int, cell: dict[str, Any]) -> CellReport | None:
    metadata = cell.get("metadata")
    architect = metadata.get("architect") if isinstance(metadata, dict) else None
    record = architect.get(METADATA_KEY) if isinstance(architect, dict) else None
    if architect is None or (isinstance(architect, dict) and METADATA_KEY not in architect):
        return None
    cell_id = cell.get("id") if isinstance(cell.get("id"), str) else None
    source = cell.get("source", "")
    text = source if isinstance(source, str) else "".join(s for s in source if isinstance(s, str))
    lines = len(text.splitlines())
    try:
        if not isinstance(architect, dict):
            raise ProvenanceError("metadata.architect is not a mapping")
        found = compare(text, record)
    except ProvenanceError as exc:
        return CellReport(index, cell_id, [], lines, 0, 0, False, [], malformed=str(exc))
    return CellReport(
        index,
        cell_id,
        found.agent_lines,
        lines,
        found.changed,
        found.deleted,
        found.untouched,
        list(found.runs),
    )


def _nbgrader_names(file: Path) -> tuple[str | None, str | None]:
    """nbgrader's `<step>/<student>/<assignment>/<notebook>`: the student and the assignment, if it is so."""
    parts = file.resolve().parts
    for step in _NBGRADER_STEPS[:3]:  # the folders that hold one folder per student
        if step in parts:
            at = len(parts) - 1 - parts[::-1].index(step)
            if len(parts) - at >= 4:
                return parts[at + 1], parts[at + 2]
    return None, None


# --------------------------------------------------------------------------- the command


def _ranges(numbers: Sequence[int]) -> str:
    out: list[str] = []
    for n in numbers:
        if out and (last := out[-1].split("-")[-1]) and int(last) == n - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _text(report: Report) -> str:
    lines: list[str] = []
    for notebook in report.notebooks:
        who = f" (student {notebook.student}, {notebook.assignment})" if notebook.student else ""
        lines.append(
            f"{notebook.path}{who}: {len(notebook.cells)} of {notebook.cells_total} cell(s) with agent "
            f"lines; {notebook.agent_lines} agent line(s) as the agent wrote them, "
            f"{notebook.changed} changed since"
        )
        for cell in notebook.cells:
            label = f"  cell {cell.index}" + (f" id={cell.cell_id}" if cell.cell_id else "")
            if cell.malformed:
                lines.append(f"{label}: provenance malformed ({cell.malformed}); not trusted")
                continue
            models = ", ".join(sorted({run["model"] for run in cell.runs})) or "unknown model"
            agent = f"lines {_ranges(cell.agent_lines)}" if cell.agent_lines else "no lines"
            since = (
                "untouched since"
                if cell.untouched
                else f"{cell.changed} changed, {cell.deleted} deleted since"
            )
            lines.append(f"{label}: agent ({models}) wrote {agent} of {cell.lines}; {since}")
    lines += [f"skipped {item['path']}: {item['reason']}" for item in report.skipped]
    if not report.notebooks and not report.skipped:
        lines.append("No notebooks found.")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m architect_nb provenance",
        description="Which cells and lines of notebooks the agent wrote, and whether students changed them.",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks, or folders of them (nbgrader's too)")
    parser.add_argument("--json", action="store_true", help="print JSON, for a grading script")
    args = parser.parse_args(list(argv))
    report = report_paths(args.paths)
    if args.json:
        data = {"notebooks": [n.to_json() for n in report.notebooks], "skipped": report.skipped}
        print(json.dumps(data, indent=2))
    else:
        print(_text(report))
    sys.stdout.flush()
    return 0
