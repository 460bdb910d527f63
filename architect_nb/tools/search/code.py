"""`search_code`'s pipeline: compile the regex, let `rg` drop files that cannot match, run `re` on the rest.

`rg` only prefilters: it looks for literal text that every match must contain (`literals.required_needles`),
or else for a looser twin of the regex (`translate.rg_superset`), and the surviving files are searched with
Python's `re` in worker processes (`workers.run_scans`), so the results are exactly `re`'s. A regex with
neither (a backreference, or nothing but `\\w`, `\\s` and the like) is scanned in full, which is slower.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

from architect_nb.tools.filesystem.fileio import describe_size
from architect_nb.tools.search.literals import required_needles
from architect_nb.tools.search.programs import ProgramError, chunks, find_rg, run_each
from architect_nb.tools.search.results import FileHits, SearchOutcome, shown
from architect_nb.tools.search.scan import NOTEBOOK_SUFFIX
from architect_nb.tools.search.translate import rg_superset
from architect_nb.tools.search.workers import run_scans

__all__ = ["FLAGS", "MAX_FILE_BYTES", "CodeSearch", "compile_regex", "prefilter_args", "prefilter_deadline"]

#: `^` and `$` match at every line, as a model writing a line-oriented pattern expects.
FLAGS = re.MULTILINE
#: Files larger than this are not read by `re` (they are named in the output instead).
MAX_FILE_BYTES = 50 * 1024 * 1024
#: With fewer candidate files than this, starting `rg` costs more than it saves.
_PREFILTER_MIN_FILES = 16
_MAX_PATTERN = 2000
#: Seconds rg may spend on a regex's looser twin before the prefilter is given up.
_TWIN_BUDGET = 1.0
#: With at least this many files to read, the scan is split between two worker processes.
_PARALLEL_MIN_FILES = 200


class RegexError(ValueError):
    """The pattern is not a usable Python regex; the message shows where and why."""


def compile_regex(pattern: str) -> re.Pattern[str]:
    """Compile a model's pattern, or raise `RegexError` with a message that points at the problem."""
    if not pattern:
        raise RegexError("The pattern is empty; give the regex to look for.")
    if len(pattern) > _MAX_PATTERN:
        raise RegexError(
            f"The pattern is {len(pattern):,} characters long; the limit is {_MAX_PATTERN:,}. "
            "Search for a shorter, distinctive part."
        )
    try:
        return re.compile(pattern, FLAGS)
    except re.error as exc:
        pos = exc.pos if exc.pos is not None else len(pattern)
        lo = max(0, pos - 40)
        snippet = ("…" if lo else "") + shown(pattern[lo : pos + 40])
        caret = " " * (pos - lo + (1 if lo else 0))
        raise RegexError(
            f"Invalid regex: {exc.msg} at position {pos}:\n  {snippet}\n  {caret}^\n"
            "Fix the pattern, escape characters meant literally (\\( \\[ \\. \\* \\+ \\?), "
            "or use grep for plain text."
        ) from None
    except (OverflowError, RecursionError, ValueError, MemoryError) as exc:
        raise RegexError(f"The pattern cannot be compiled ({exc}); simplify it.") from None


@dataclass(slots=True)
class CodeSearch:
    """One search_code call over an already collected file list."""

    root: str
    files: list[tuple[str, str]]
    pattern: str
    context: int
    max_results: int
    deadline: float
    time_bound: float
    use_rg: bool = True
    in_process: bool = False
    #: Search notebooks' cell outputs too (their sources always are).
    notebook_outputs: bool = False
    #: The files that may match and how many files were ruled on, when rg's walk already said (`rg_walk`).
    prefiltered: tuple[list[tuple[str, str]], int] | None = None
    #: How many files the search is over, if not `len(files)` (rg's walk lists only the candidates).
    total: int | None = None

    def run(self) -> SearchOutcome:
        candidates, prefilter_done = self.prefiltered or self._prefilter()
        files = [(i, path) for i, (path, _rel) in enumerate(candidates)]
        # Many files: two workers (every other file each) use both cores. Each details its own first
        # max_results lines, so together they hold the first max_results in file order.
        parts = 2 if len(files) >= _PARALLEL_MIN_FILES and not self.in_process else 1
        requests = [
            {
                "pattern": self.pattern,
                "flags": FLAGS,
                "files": files[part::parts],
                "context": self.context,
                "max_lines": self.max_results,
                "max_bytes": MAX_FILE_BYTES,
                "outputs": self.notebook_outputs,
            }
            for part in range(parts)
        ]
        result = run_scans(requests, max(0.0, self.deadline - time.monotonic()), in_process=self.in_process)
        hits: list[FileHits] = []
        big: list[str] = []
        for event in result.events:
            rel = candidates[event[1]][1]
            if event[0] == "hits":
                hits.append(FileHits(rel, event[2], event[3], event[4] if len(event) > 4 else None))
            elif event[0] == "big":
                big.append(f"{shown(rel)} ({describe_size(event[2])})")
        ruled_out = prefilter_done - len(candidates)
        total = len(self.files) if self.total is None else self.total
        outcome = SearchOutcome(
            hits=hits,
            files_searched=ruled_out + result.files_done,
            files_total=total,
            timed_out=result.timed_out or prefilter_done < total,
            files_read=result.files_done,
            time_bound=self.time_bound,
        )
        if big:
            outcome.notes.append(
                f"(Not searched, over {describe_size(MAX_FILE_BYTES)}: {', '.join(big[:5])}"
                + (f" and {len(big) - 5} more" if len(big) > 5 else "")
                + "; use grep for them.)"
            )
        if result.error:
            outcome.notes.append(f"(The search failed part way: {result.error}.)")
        if result.timed_out:  # the regex itself was slow, not the walk or rg
            outcome.notes.append(
                "(Nested quantifiers such as (a+)+ can take forever on some lines; simplify the pattern.)"
            )
        return outcome

    def _prefilter(self) -> tuple[list[tuple[str, str]], int]:
        """The files that may match, and how many files the prefilter got through before the deadline."""
        rg = find_rg() if self.use_rg else None
        if rg is None or len(self.files) < _PREFILTER_MIN_FILES:
            return self.files, len(self.files)
        pattern_args = prefilter_args(self.pattern)
        if pattern_args is None:
            return self.files, len(self.files)
        kept: set[str] = set()
        done = 0
        rels = [rel for _path, rel in self.files]
        twin = "-U" in pattern_args
        deadline = prefilter_deadline(self.deadline, twin)
        batches = list(chunks(rels))
        runs = run_each(
            [_prefilter_command(rg, pattern_args, batch) for batch in batches], self.root, deadline
        )
        try:
            for batch, (out, timed_out) in zip(batches, runs, strict=True):
                if timed_out and twin:
                    return self.files, len(self.files)
                if timed_out:
                    break
                kept.update(os.fsdecode(name) for name in out.split(b"\x00") if name)
                done += len(batch)
        except ProgramError:  # never drop files on rg's say-so when rg did not finish
            return self.files, len(self.files)
        finally:
            runs.close()
        # A notebook's JSON escapes quotes and backslashes, so rg's verdict on it says nothing: keep them all.
        candidates = [
            entry for entry in self.files[:done] if entry[1] in kept or entry[1].endswith(NOTEBOOK_SUFFIX)
        ]
        return candidates, done


def prefilter_args(pattern: str) -> list[str] | None:
    """rg pattern arguments that match every file where `pattern` matches; None if none are worth a pass.

    Literals every match contains come first (fast, and rg needs no multiline mode); otherwise a looser twin
    of the whole regex, searched with `-U` since a Python match may span lines.
    """
    needles = required_needles(pattern, FLAGS)
    if needles is not None:
        return needles.rg_args()
    twin = rg_superset(pattern, FLAGS)
    return None if twin is None else ["-U", "-e", twin]


def prefilter_deadline(deadline: float, twin: bool) -> float:
    """When rg must give up prefiltering: a twin regex can be slow for rg too (many wide repetitions), and
    past its budget every file is read instead."""
    return min(deadline, time.monotonic() + _TWIN_BUDGET) if twin else deadline


def _prefilter_command(rg: str, pattern_args: list[str], batch: list[str]) -> list[str]:
    # Default encoding (auto) so UTF-16 files with a BOM are compared as text, as the scan decodes them.
    return [rg, "--no-config", "--no-messages", "-a", "-s", "-l", "--null", *pattern_args, "--", *batch]
