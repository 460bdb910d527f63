"""Search tools: search_code (Python regex), grep (literal text) and find_files (file-name globs).

All three walk the workspace with the project's skip rules (`walk`), never follow a symlink, skip binary
files, never look at sensitive files or architect-nb's state folders (`scope`), answer with paths relative to
the workspace, cap what they show with a visible count of the rest, and stop at a time bound, saying so.
`grep` runs `rg`, else `grep`, else pure Python, with identical results; `search_code` uses `rg` only to rule
files out, and Python's `re` decides every match. Where `rg` is installed it walks the tree itself, given the
walk's rules (`rg_walk`), and the Python walk is the fallback.

The machinery is in `architect_nb.tools.search`: `collect` (the file list), `grep` (the three backends),
`code`, `literals` and `translate` (the regex prefilter), `scan` and `workers` (`re` in killable worker
processes), `results` (the `path:line: text` output), `programs` (finding and running `rg` and `grep`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from architect_nb.paths.validators import PathTraversalError, is_inside
from architect_nb.tools.base import ToolResult
from architect_nb.tools.filesystem.fileio import FileAccessError, read_text_file
from architect_nb.tools.search.code import (
    FLAGS,
    CodeSearch,
    RegexError,
    compile_regex,
    prefilter_args,
    prefilter_deadline,
)
from architect_nb.tools.search.collect import collect_files, file_filter, rg_name_glob, start_hidden
from architect_nb.tools.search.grep import (
    BackendName,
    GrepBackend,
    Needle,
    PythonBackend,
    available_backend,
    searchable,
    searchable_among,
)
from architect_nb.tools.search.literals import required_needles
from architect_nb.tools.search.notebooks import NotebookHits, grep_notebook
from architect_nb.tools.search.programs import ProgramError, find_rg
from architect_nb.tools.search.results import FileHits, SearchOutcome, format_outcome, plural, shown
from architect_nb.tools.search.rg_walk import Listing, json_safe, rg_listing, walk_args, walk_order
from architect_nb.tools.search.scan import NOTEBOOK_SUFFIX, clip
from architect_nb.tools.search.scope import SearchScope
from architect_nb.tools.search.walk_cache import cached_scan
from architect_nb.tools.tree.globs import GlobError, compile_glob
from architect_nb.tools.tree.walk import scan
from architect_nb.tools.workspace import ToolArgs, WorkspaceTool

__all__ = [
    "DEFAULT_TIME_BOUND",
    "FindFilesArgs",
    "FindFilesTool",
    "GrepArgs",
    "GrepTool",
    "SearchCodeArgs",
    "SearchCodeTool",
]

#: Seconds one search may take before it stops and reports partial results.
DEFAULT_TIME_BOUND = 20.0
MAX_LITERAL = 1000
DEFAULT_MAX_FILES = 200
#: The largest file that is not UTF-8 whose encoding is detected to show its matching lines.
_MAX_DETECT_BYTES = 10 * 1024 * 1024
#: A search with no match that rg's walk counted at most this many files for is counted again without the
#: virtualenvs' files (one more walk; see `_listing`).
_RECOUNT_UP_TO = 100

_SEARCH_PATH = "Folder or file to search."
_FILE_PATTERN = "Glob on file names ('*.py', '*.{js,ts}'), or on paths below `path` if it contains '/'."
_OUTPUTS = "Also search .ipynb outputs."
#: Said once in the system prompt (`SKIPPED_PATHS`), and again when a search finds nothing.
_SKIPS_NAMES = "Skips .git, virtualenvs, node_modules, caches and .gitignored paths."
_SKIPS = _SKIPS_NAMES.replace(" and .gitignored paths", ", .gitignored paths and binary files")


class SearchCodeArgs(ToolArgs):
    pattern: str = Field(description="Python regular expression; ^ and $ match at line starts and ends.")
    path: str = Field(".", description=_SEARCH_PATH)
    file_pattern: str = Field("*.{py,ipynb}", description=_FILE_PATTERN)
    context_lines: int = Field(2, ge=0, le=20, description="Lines shown before and after each match.")
    max_results: int = Field(50, ge=1, le=1000, description="Most matching lines to show.")
    include_outputs: bool = Field(False, description=_OUTPUTS)


class GrepArgs(ToolArgs):
    pattern: str = Field(description="Literal text to find (not a regex).")
    path: str = Field(".", description=_SEARCH_PATH)
    file_pattern: str = Field("*", description=_FILE_PATTERN)
    recursive: bool = Field(True, description="Search subfolders too.")
    case_sensitive: bool = Field(True, description="Match letter case exactly.")
    max_results: int = Field(100, ge=1, le=1000, description="Most matching lines to show.")
    include_outputs: bool = Field(False, description=_OUTPUTS)


class FindFilesArgs(ToolArgs):
    pattern: str = Field(
        description="Glob on file names ('*.yaml', 'test_*.py'), or on paths if it contains '/'."
    )
    path: str = Field(".", description="Folder to search.")
    recursive: bool = Field(True, description="Search subfolders too.")


class _SearchTool(WorkspaceTool):
    """The tools' shared setup. `sensitive_files` (globs, as `guardrails.sensitive_files`) and
    `hidden_folders` (absolute paths: architect-nb's state folders) are never searched nor listed. With
    `rg_walk` off, the Python walk is used even where `rg` is installed."""

    reads_only = True

    def __init__(
        self,
        workspace_root: Path,
        *,
        time_bound: float = DEFAULT_TIME_BOUND,
        sensitive_files: Sequence[str] = (),
        hidden_folders: Sequence[str] = (),
        rg_walk: bool = True,
    ) -> None:
        super().__init__(workspace_root)
        self.time_bound = min(max(time_bound, 0.0), 86_400.0)
        self.scope = SearchScope(self.workspace_root, sensitive_files, hidden_folders)
        self._hidden_folders = tuple(hidden_folders)
        self.rg_walk = rg_walk

    def rooted_at(self, folder: Path) -> None:
        """Search the read root `folder`, hiding sensitive files and state folders there as here."""
        super().rooted_at(folder)
        self.scope = SearchScope(folder, self.scope.sensitive.patterns, self._hidden_folders)

    def _start(self, path: str, file_pattern: str | None, folder_only: bool = False) -> Path | ToolResult:
        try:
            start = self.resolve(path)
            if file_pattern is not None:
                compile_glob(file_pattern)
        except (PathTraversalError, GlobError) as exc:
            return ToolResult.fail(str(exc))
        where = shown(self.rel(start))
        if start_hidden(self.workspace_root, start, self.scope):
            return ToolResult.fail(
                f"'{where}' is not searched: it is a sensitive file or lies in architect-nb's state folder."
            )
        if not start.exists():
            return ToolResult.fail(f"'{where}' does not exist. Use list_files to see what is there.")
        if start.is_dir():
            return start
        if folder_only:
            return ToolResult.fail(f"'{where}' is a file; give the folder to search in.")
        if not start.is_file():
            return ToolResult.fail(f"'{where}' is not a regular file; it cannot be searched.")
        return start

    def _scope_notes(self) -> list[str]:
        """What the model is told of the files it cannot search: that sensitive ones are left out, so it
        does not take a missing match for proof."""
        return ["(Sensitive files are withheld from searches.)"] if self.scope.sensitive else []

    def _rg_walk(self, rg: str | None, start: Path) -> list[str] | None:
        """rg's arguments for walking `start` itself, or None where the Python walk is to be used."""
        if rg is None or not self.rg_walk or not start.is_dir():
            return None
        return walk_args(rg, self.workspace_root, start, self.scope)

    def _listing(
        self,
        base: list[str],
        mode: list[str],
        start: Path,
        file_pattern: str,
        deadline: float,
        *,
        notebooks: bool = False,
    ) -> Listing | None:
        """rg's walk of `start` (`rg_listing`), or None if rg failed (the Python walk then answers)."""
        select = file_filter(self.workspace_root, start, file_pattern)
        try:
            listing = rg_listing(
                base,
                [*rg_name_glob(file_pattern), *mode],
                self.workspace_root,
                start,
                deadline,
                select=select,
                scope=self.scope or None,
                notebooks=notebooks,
            )
            if (
                "-c" in mode
                and 0 < listing.searched <= _RECOUNT_UP_TO
                and not listing.files
                and not listing.notebooks
            ):
                # rg's count of files searched includes those in virtualenvs, which are left out only on its
                # answer. With no match anywhere and few files searched, they may all have been in one: the
                # files the walk sees are counted, so that a file pattern no file matches is told as such and
                # not as "no matches in N files". Past that bound the second walk is not paid for: a
                # virtualenv not named as one (`env/`, not `.venv`) whose files alone match the pattern then
                # reads as "no matches in N files".
                seen = rg_listing(
                    base,
                    [*rg_name_glob(file_pattern), "--files"],
                    self.workspace_root,
                    start,
                    deadline,
                    select=select,
                    scope=self.scope or None,
                )
                listing.searched = len(seen.files)
                listing.timed_out |= seen.timed_out
            return listing
        except ProgramError:
            return None

    def _no_matches(
        self, what: str, start: Path, files: int, file_pattern: str, outcome: SearchOutcome
    ) -> ToolResult:
        where = shown(self.rel(start))
        if files == 0 and not outcome.timed_out:
            text = (
                f"No files match file_pattern {shown(file_pattern)!r} in '{where}'; "
                "try file_pattern='*'. " + _SKIPS
            )
        else:
            text = f"No matches for {what} in '{where}' ({plural(outcome.files_searched, 'file')} searched)."
        text = "\n".join([text, *outcome.trailer()])
        return ToolResult.ok(
            text, matches=0, files_searched=outcome.files_searched, timed_out=outcome.timed_out
        )


class SearchCodeTool(_SearchTool):
    name = "search_code"
    description = "Search file contents with a Python regex; returns `path:line: text` matches with context."
    args_model = SearchCodeArgs

    def __init__(
        self,
        workspace_root: Path,
        *,
        time_bound: float = DEFAULT_TIME_BOUND,
        use_rg: bool = True,
        in_process: bool = False,
        sensitive_files: Sequence[str] = (),
        hidden_folders: Sequence[str] = (),
        rg_walk: bool = True,
    ) -> None:
        super().__init__(
            workspace_root,
            time_bound=time_bound,
            sensitive_files=sensitive_files,
            hidden_folders=hidden_folders,
            rg_walk=rg_walk,
        )
        self.use_rg = use_rg
        self.in_process = in_process

    def execute(self, **kwargs: Any) -> ToolResult:
        args = SearchCodeArgs.model_validate(kwargs)
        elsewhere = self.run_in_read_root(args.model_dump(), lists_paths=True)
        if elsewhere is not None:
            return elsewhere
        try:
            compile_regex(args.pattern)
        except RegexError as exc:
            return ToolResult.fail(str(exc))
        start = self._start(args.path, args.file_pattern)
        if isinstance(start, ToolResult):
            return start
        deadline = time.monotonic() + self.time_bound
        walked = self._walk_and_prefilter(start, args.pattern, args.file_pattern, deadline)
        prefiltered: tuple[list[tuple[str, str]], int] | None = None
        if walked is not None:
            files, ruled_on, walk_cut = walked
            prefiltered = (files, ruled_on)
        else:
            files, walk_cut = collect_files(
                self.workspace_root,
                start,
                args.file_pattern,
                recursive=True,
                deadline=deadline,
                scope=self.scope,
            )
            ruled_on = len(files)
        search = CodeSearch(
            root=str(self.workspace_root),
            files=files,
            prefiltered=prefiltered,
            total=ruled_on,
            pattern=args.pattern,
            context=args.context_lines,
            max_results=args.max_results,
            deadline=deadline,
            time_bound=self.time_bound,
            use_rg=self.use_rg,
            in_process=self.in_process,
            notebook_outputs=args.include_outputs,
        )
        outcome = search.run()
        outcome.timed_out |= walk_cut
        outcome.notes += self._scope_notes()
        if walked is not None and walk_cut:
            outcome.files_total = None  # rg's walk was cut: how many files there are is not known
        if not outcome.hits:
            return self._no_matches(
                f"regex {shown(args.pattern)!r}", start, ruled_on, args.file_pattern, outcome
            )
        text, metadata = format_outcome(outcome, args.max_results, args.context_lines)
        return ToolResult.ok(text, **metadata)

    def _walk_and_prefilter(
        self, start: Path, pattern: str, file_pattern: str, deadline: float
    ) -> tuple[list[tuple[str, str]], int, bool] | None:
        """rg walks `start` and rules out the files that cannot match, in one pass: (the files that may
        match, how many files were ruled on, whether time cut the walk); None where the Python walk is to be
        used."""
        rg = find_rg() if self.use_rg else None
        base = self._rg_walk(rg, start)
        if base is None:
            return None
        needles = required_needles(pattern, FLAGS)
        pattern_args = prefilter_args(pattern)
        listing = None
        if pattern_args is not None:
            if not _rg_can_select(file_pattern):
                return None  # the Python walk and rg over its list
            twin = "-U" in pattern_args
            mode = ["-a", "-s", "-c", "--stats", "-m", "1", *pattern_args]
            # A notebook's JSON escapes quotes and backslashes, so rg's verdict on its raw text only counts
            # for plain needles; otherwise every notebook is read.
            plain = needles is not None and all(json_safe(s) for s in needles.strings)
            listing = self._listing(
                base, mode, start, file_pattern, prefilter_deadline(deadline, twin), notebooks=not plain
            )
            if listing is not None and listing.timed_out and twin:
                listing = None
        if listing is None:
            listing = self._listing(base, ["--files"], start, file_pattern, deadline)
            if listing is None:
                return None
        rels = sorted({rel for rel, _count in listing.files} | set(listing.notebooks), key=walk_order)
        root = str(self.workspace_root)
        return [(os.path.join(root, rel), rel) for rel in rels], listing.searched, listing.timed_out


class GrepTool(_SearchTool):
    name = "grep"
    description = "Search file contents for literal text (not a regex); returns `path:line: text` matches."
    args_model = GrepArgs

    def __init__(
        self,
        workspace_root: Path,
        *,
        time_bound: float = DEFAULT_TIME_BOUND,
        backend: BackendName | None = None,
        sensitive_files: Sequence[str] = (),
        hidden_folders: Sequence[str] = (),
        rg_walk: bool = True,
    ) -> None:
        """`backend` forces "rg", "grep" or "python"; by default the first of those that is installed."""
        super().__init__(
            workspace_root,
            time_bound=time_bound,
            sensitive_files=sensitive_files,
            hidden_folders=hidden_folders,
            rg_walk=rg_walk,
        )
        self.backend_name = backend
        self._backend: GrepBackend | None = None

    @property
    def backend(self) -> GrepBackend:
        if self._backend is None:
            self._backend = available_backend(self.backend_name)
        return self._backend

    def execute(self, **kwargs: Any) -> ToolResult:
        args = GrepArgs.model_validate(kwargs)
        elsewhere = self.run_in_read_root(args.model_dump(), lists_paths=True)
        if elsewhere is not None:
            return elsewhere
        problem = _literal_problem(args.pattern)
        if problem:
            return ToolResult.fail(problem)
        start = self._start(args.path, args.file_pattern)
        if isinstance(start, ToolResult):
            return start
        deadline = time.monotonic() + self.time_bound
        needle = Needle(args.pattern, ignore_case=not args.case_sensitive)
        backend = self.backend
        listing = self._walk_and_count(backend, start, args, needle, deadline)
        if listing is not None:
            rels = [rel for rel, _count in listing.files]  # in walk order
            if listing.notebooks:
                rels = sorted(set(rels) | set(listing.notebooks), key=walk_order)
            walk_cut = listing.timed_out
        else:
            files, walk_cut = collect_files(
                self.workspace_root,
                start,
                args.file_pattern,
                recursive=args.recursive,
                deadline=deadline,
                scope=self.scope,
            )
            rels = [rel for _path, rel in files]
        notebooks = self._notebooks(rels, needle, args.include_outputs, deadline)
        counted = None
        if listing is not None:
            counts = {rel: count for rel, count in listing.files if count and rel not in notebooks}
            counted = (counts, listing.searched)
        try:
            outcome = self._search(backend, rels, needle, args.max_results, deadline, notebooks, counted)
        except ProgramError:  # rg or grep broke: Python gives the same answer, only slower
            backend = PythonBackend()
            outcome = self._search(backend, rels, needle, args.max_results, deadline, notebooks)
        outcome.timed_out |= walk_cut
        outcome.notes += self._scope_notes()
        if listing is not None and walk_cut:
            outcome.files_total = None  # rg's walk was cut: how many files there are is not known
        if not outcome.hits:
            total = listing.searched if listing is not None else len(rels)
            return self._no_matches(f"{shown(args.pattern)!r}", start, total, args.file_pattern, outcome)
        text, metadata = format_outcome(outcome, args.max_results, 0)
        metadata["backend"] = backend.name
        return ToolResult.ok(text, **metadata)

    def _walk_and_count(
        self, backend: GrepBackend, start: Path, args: GrepArgs, needle: Needle, deadline: float
    ) -> Listing | None:
        """rg walks `start` and counts each file's matching lines in one pass; None where the Python walk is
        to be used (another backend, a search of one folder level, or rules rg cannot be given)."""
        program = getattr(backend, "program", None) if backend.name == "rg" else None
        base = self._rg_walk(program, start) if args.recursive else None
        if base is None or not _rg_can_select(args.file_pattern):
            return None
        mode = ["-a", "-s", "-c", "--stats", *needle.rg_pattern_args()]
        # Notebooks are searched by cell; rg's count on the raw JSON finds them only for plain text.
        notebooks = not json_safe(needle.text)
        return self._listing(base, mode, start, args.file_pattern, deadline, notebooks=notebooks)

    def _notebooks(
        self, rels: list[str], needle: Needle, outputs: bool, deadline: float
    ) -> dict[str, NotebookHits]:
        """Notebooks are searched by cell here, not by the backend (which would see their JSON)."""
        found: dict[str, NotebookHits] = {}
        for rel in rels:
            if rel.endswith(NOTEBOOK_SUFFIX) and time.monotonic() < deadline:
                hits = grep_notebook(os.path.join(self.workspace_root, rel), needle, outputs)
                if hits is not None:
                    found[rel] = hits
        return found

    def _search(
        self,
        backend: GrepBackend,
        rels: list[str],
        needle: Needle,
        max_results: int,
        deadline: float,
        notebooks: dict[str, NotebookHits] | None = None,
        counted: tuple[dict[str, int], int] | None = None,
    ) -> SearchOutcome:
        """`counted`: the matching lines per file (notebooks left out) and the files searched, when rg's walk
        told them (`rels` then holds only the files with matches and the notebooks)."""
        root = str(self.workspace_root)
        notebooks = notebooks or {}
        if counted is not None:
            counts, searched = counted
            total = searched
        else:
            counts, searched = backend.counts(
                root, [rel for rel in rels if rel not in notebooks], needle, deadline
            )
            searched += len(notebooks)
            total = len(rels)
        counts.update((rel, hits[0]) for rel, hits in notebooks.items() if hits[0])
        order = {rel: i for i, rel in enumerate(rels)}
        prefix = os.path.join(root, "")
        paths = {prefix + rel: rel for rel in counts if rel in order}
        matched = sorted((paths[path] for path in searchable_among(list(paths))), key=order.__getitem__)
        display: list[str] = []
        budget = max_results
        for rel in matched:
            if budget <= 0:
                break
            display.append(rel)
            budget -= counts[rel]
        lines: dict[str, list[tuple[int, bool, str]]] = {rel: [] for rel in display}
        for rel in display:
            if rel in notebooks:
                lines[rel] = notebooks[rel][1]
        # The few files shown are read here when rg's walk counted: one program start less.
        reader = PythonBackend() if counted is not None else backend
        encodings: dict[str, str] = {}
        for rel, number, raw in reader.lines(
            root, [r for r in display if r not in notebooks], needle, deadline, max_results
        ):
            if rel in lines:
                encoding = encodings.get(rel, "utf-8")
                if not _decodes(raw, encoding):  # a legacy file: its lines in its own encoding
                    encoding = encodings.setdefault(rel, _line_encoding(os.path.join(root, rel), rel))
                col = len(raw[: max(needle.find(raw, 0), 0)].decode(encoding, "replace"))
                lines[rel].append((number, True, clip(raw.decode(encoding, "replace"), col)))
        for rel in display:  # a file swapped for a symlink while rg read it shows nothing
            if lines[rel] and not searchable(os.path.join(root, rel)):
                lines[rel] = []
        hits = [
            FileHits(
                rel,
                counts[rel],
                sorted(lines[rel]) if rel in lines else [],
                notebooks[rel][2] if rel in notebooks else None,
            )
            for rel in matched
        ]
        return SearchOutcome(
            hits=hits,
            files_searched=searched,
            files_total=total,
            timed_out=searched < total,
            time_bound=self.time_bound,
        )


def _decodes(raw: bytes, encoding: str) -> bool:
    try:
        raw.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def _line_encoding(path: str, rel: str) -> str:
    """The encoding a matched line of a file that is not UTF-8 is shown in: the file's own, as read_file
    decides it; UTF-8 (undecodable bytes shown as U+FFFD) where that cannot be told. Lines of a file with a
    BOM are UTF-8 already (`grep.rg_view`)."""
    try:
        encoding = read_text_file(Path(path), rel, _MAX_DETECT_BYTES).encoding
    except FileAccessError:
        return "utf-8"
    return "utf-8" if encoding.startswith("utf-") else encoding


def _rg_can_select(file_pattern: str) -> bool:
    """Whether rg can pick the files `file_pattern` accepts by itself, so its count of files is ours."""
    return file_pattern.removeprefix("./") in ("*", "**") or bool(rg_name_glob(file_pattern))


def _literal_problem(pattern: str) -> str | None:
    if not pattern:
        return "The pattern is empty; give the text to look for."
    if len(pattern) > MAX_LITERAL:
        return (
            f"The pattern is {len(pattern):,} characters long; the limit is {MAX_LITERAL:,}. "
            "Search for a shorter, distinctive part."
        )
    if "\n" in pattern or "\r" in pattern:
        return "The pattern spans lines; grep matches within one line. Search for one line of it."
    if "\x00" in pattern:
        return "The pattern contains a NUL byte; binary files are not searched."
    bad = next((ch for ch in pattern if "\ud800" <= ch <= "\udfff"), None)
    if bad:
        return f"The pattern contains the unpaired surrogate U+{ord(bad):04X}; send valid Unicode text."
    return None


class FindFilesTool(_SearchTool):
    name = "find_files"
    description = "Find files by name glob; returns paths relative to the workspace."
    args_model = FindFilesArgs

    def __init__(
        self,
        workspace_root: Path,
        *,
        time_bound: float = DEFAULT_TIME_BOUND,
        max_files: int = DEFAULT_MAX_FILES,
        sensitive_files: Sequence[str] = (),
        hidden_folders: Sequence[str] = (),
    ) -> None:
        super().__init__(
            workspace_root,
            time_bound=time_bound,
            sensitive_files=sensitive_files,
            hidden_folders=hidden_folders,
        )
        self.max_files = max_files

    def execute(self, **kwargs: Any) -> ToolResult:
        args = FindFilesArgs.model_validate(kwargs)
        elsewhere = self.run_in_read_root(args.model_dump(), lists_paths=True)
        if elsewhere is not None:
            return elsewhere
        start = self._start(args.path, args.pattern, folder_only=True)
        if isinstance(start, ToolResult):
            return start
        pattern = args.pattern.removeprefix("./")
        regex = compile_glob(args.pattern)
        loose = re.compile(regex.pattern, re.IGNORECASE)
        by_path = "/" in pattern
        skip = 0 if start == self.workspace_root else len(self.rel(start)) + 1
        recursive = args.recursive or "/" in pattern  # as list_files: a path pattern implies depth
        deadline = time.monotonic() + self.time_bound
        found: list[str] = []
        total = 0
        hidden = self.scope.hides if self.scope else None
        near_miss: str | None = None
        timed_out = False
        entries = (
            cached_scan(self.workspace_root, start)
            if recursive
            else scan(self.workspace_root, start, recursive=False)
        )
        for count, (path, rel, kind) in enumerate(entries):
            if count % 512 == 0 and time.monotonic() > deadline:
                timed_out = True
                break
            target = rel[skip:] if by_path else rel[rel.rfind("/") + 1 :]
            if hidden is not None and hidden(rel):
                continue
            if regex.match(target) is None:
                if near_miss is None and loose.match(target) is not None:
                    near_miss = rel
                continue
            if kind == "link" and not self._link_inside(path):
                continue  # never show (or invite reading) a link that leads out of the workspace
            total += 1
            if len(found) < self.max_files:
                found.append(shown(rel))
        lines = [*found] if found else [self._nothing_found(args.pattern, start, near_miss)]
        if total > len(found):
            lines.append(f"... {plural(total - len(found), 'more file')}; narrow the pattern or path.")
        if timed_out:
            lines.append(
                f"(Search stopped at its {self.time_bound:g} s time bound: the list is partial. "
                "Narrow the path.)"
            )
        return ToolResult.ok("\n".join(lines), files=total, shown=len(found), timed_out=timed_out)

    def _link_inside(self, path: str) -> bool:
        target = Path(os.path.realpath(path))
        return is_inside(target, self.workspace_root) and target.is_file()

    def _nothing_found(self, pattern: str, start: Path, near_miss: str | None) -> str:
        text = f"No files match {shown(pattern)!r} in '{shown(self.rel(start))}'."
        if near_miss is not None:
            text += f" Ignoring case, '{shown(near_miss)}' would match; globs are case-sensitive."
        elif not any(ch in pattern for ch in "*?[{"):
            text += f" Names must match whole; try '*{shown(pattern)}*'."
        return text + " find_files matches files, not folders. " + _SKIPS_NAMES
