"""Walking the workspace the way a developer expects: one set of skip rules for every tool.

Skipped: version-control folders, `__pycache__`, `.ipynb_checkpoints`, `node_modules`, tool caches,
virtualenvs (any folder holding `pyvenv.cfg` or `conda-meta`), and whatever `.gitignore` files (at any
depth) and `.git/info/exclude` ignore. Symlinked folders are never entered, so a walk cannot leave the
workspace or loop.

The rules are read as ripgrep reads them: each path is judged by the rules that match the path itself, and
an ignored folder is simply not entered. So the folder a walk starts from is walked even when it is ignored
(or lies in an ignored folder), as ripgrep searches a path it is given: `build/` does not hide the files of
a `build` the caller named, while `*.log` still hides `build/x.log`. The skip list applies below the start
all the same: a walk of a named folder never enters a `.git`, a virtualenv or a cache inside it.

`walk` yields `Entry` objects; `scan` is the same walk as plain tuples, for the search tools, which meet
every file of a large tree and cannot afford an object per file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pathspec

from architect_nb.config.schema import CACHE_DIR_NAMES

__all__ = ["SKIPPED_DIR_NAMES", "Entry", "IgnoreRules", "Kind", "is_skipped_dir", "scan", "walk"]

SKIPPED_DIR_NAMES = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", ".tox", ".nox", *CACHE_DIR_NAMES}
)
_VENV_MARKERS = ("pyvenv.cfg", "conda-meta")
#: The group pathspec's rule regexes use for the '/' after a folder they match (`build/` in `build/x.py`).
_DIR_MARK = "ps_d"
#: `data/**/` means the folders below `data`, as git and ripgrep read it; pathspec reads it as `data/`.
_FOLDERS_BELOW = re.compile(r"/\*\*/(\s*)$")

#: What `scan` met: a folder, a regular file, a symlink (never followed) or anything else (a FIFO, a socket).
Kind = Literal["dir", "file", "link", "other"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One file or folder met by a walk. `rel` is relative to the workspace root, with '/' separators."""

    path: Path
    rel: str
    is_dir: bool
    is_symlink: bool


def is_skipped_dir(path: Path, name: str) -> bool:
    """True for folders no tool should descend into (see the module docstring)."""
    if name in SKIPPED_DIR_NAMES:
        return True
    return any(os.path.exists(os.path.join(path, marker)) for marker in _VENV_MARKERS)


class _Spec:
    """One ignore file: pathspec's rules plus one combined regex that rejects most paths in a single match."""

    __slots__ = ("_rules", "quick", "spec")

    def __init__(self, spec: pathspec.GitIgnoreSpec) -> None:
        self.spec = spec
        self.quick = _combined_regex(spec)
        self._rules: list[tuple[bool, re.Pattern[str], bool, bool]] | None = None

    def verdict(self, sub: str) -> bool | None:
        """pathspec's answer for `sub` (relative to this file's folder; folders end in '/'), or None.

        A file in an ignored folder is ignored too: `build/` matches `build/x.py`.
        """
        if self.quick is not None and self.quick.match(sub) is None:
            return None
        result = self.spec.check_file(sub).include
        return None if result is None else bool(result)

    def own_verdict(self, sub: str) -> bool | None:
        """`verdict`, counting only rules that match `sub` itself, not one of its folders: ripgrep's answer.

        `build/` does not match `build/x.py` here, while `*.log` matches `build/x.log` and `data/**` matches
        `data/x` (but not `data/`). Of the rules that match, the last one wins, as in git.
        """
        if self.quick is not None and self.quick.match(sub) is None:
            return None
        rules = self._rules if self._rules is not None else self._own_rules()
        if not rules:
            return self.verdict(sub)
        # Only matches of `sub` itself count here (a folder rule matches the folder, not what it holds), so
        # pathspec ranking name matches over folder matches, which is about paths inside a folder, is moot.
        for include, regex, anchored, contents in reversed(rules):
            if contents:  # `data/**`: a match of sub without its last character is a folder sub lies in
                m = (regex.match if anchored else regex.search)(sub, 0, len(sub) - 1)
            else:
                m = regex.fullmatch(sub) if anchored else _search_to_end(regex, sub)
            if m is not None:
                return include
        return None

    def _own_rules(self) -> list[tuple[bool, re.Pattern[str], bool, bool]]:
        # (ignores?, regex, anchored at the start?, about a folder's contents?) per rule. pathspec writes a
        # rule ending in `/**` as a regex ending in '/' (`^data/`) and marks a folder rule's last '/' with
        # _DIR_MARK. A rule not shaped as expected gives an empty list: `own_verdict` falls back to `verdict`.
        rules: list[tuple[bool, re.Pattern[str], bool, bool]] = []
        for pattern in getattr(self.spec, "patterns", ()):
            include = getattr(pattern, "include", None)
            regex = getattr(pattern, "regex", None)
            if include is None:
                continue
            if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
                rules = []
                break
            text = regex.pattern
            contents = text.endswith("/") and not text.endswith(f"(?P<{_DIR_MARK}>/)")
            rules.append((bool(include), regex, text.startswith("^"), contents))
        self._rules = rules
        return rules


def _search_to_end(regex: re.Pattern[str], text: str) -> re.Match[str] | None:
    """A match of the unanchored `regex` that ends where `text` ends, if any."""
    for start in range(len(text)):
        m = regex.fullmatch(text, start)
        if m is not None:
            return m
    return None


def _combined_regex(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    # A path no rule's regex matches gets no verdict from this file; checking that with one regex instead of
    # one per rule makes the common case (an ordinary file) cheap. Any surprise means: no shortcut.
    parts = []
    for pattern in getattr(spec, "patterns", ()):
        regex = getattr(pattern, "regex", None)
        if getattr(pattern, "include", None) is None:
            continue
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str) or "(?P=" in regex.pattern:
            return None
        body = re.sub(r"\(\?P<\w+>", "(?:", regex.pattern)
        # pathspec searches with each rule; the combined regex is matched, so a rule not anchored at the start
        # may begin anywhere.
        parts.append("(?:" + ("" if body.startswith("^") else "(?s:.*?)") + body + ")")
    try:
        return re.compile("|".join(parts)) if parts else None
    except re.error:
        return None


class IgnoreRules:
    """The `.gitignore` rules of a workspace, loaded folder by folder as a walk reaches them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, _Spec | None] = {}
        exclude = root / ".git" / "info" / "exclude"
        self._exclude = self._load(exclude) if exclude.is_file() else None

    def _load(self, file: Path) -> _Spec | None:
        try:
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
        spec = pathspec.GitIgnoreSpec.from_lines([_FOLDERS_BELOW.sub(r"/**/*/\1", line) for line in lines])
        return _Spec(spec) if len(spec) else None

    def read_ignore_folders(self) -> list[str]:
        """The folders (relative to the root) whose `.gitignore` was read and holds rules."""
        return [dir_rel for dir_rel, spec in self._specs.items() if spec is not None]

    def _spec_for(self, dir_rel: str) -> _Spec | None:
        if dir_rel not in self._specs:
            folder = self.root / dir_rel if dir_rel else self.root
            gitignore = folder / ".gitignore"
            self._specs[dir_rel] = self._load(gitignore) if gitignore.is_file() else None
        return self._specs[dir_rel]

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the rules ignore `rel` itself: the deepest `.gitignore` with a rule matching it decides.

        A path inside an ignored folder is not ignored for that alone; a walk never gets there.
        """
        parts = rel.split("/")
        chain = [(d, s) for d in ("/".join(parts[:i]) for i in range(len(parts))) if (s := self._spec_for(d))]
        return self._ignored_by(chain, rel, is_dir)

    def _ignored_by(self, chain: list[tuple[str, _Spec]], rel: str, is_dir: bool) -> bool:
        """`is_ignored`, given the ignore files of `rel`'s folders (outermost first) already looked up."""
        candidate = rel + "/" if is_dir else rel
        for dir_rel, spec in reversed(chain):
            verdict = spec.own_verdict(candidate[len(dir_rel) + 1 :] if dir_rel else candidate)
            if verdict is not None:
                return verdict
        if self._exclude is not None:
            return bool(self._exclude.own_verdict(candidate))
        return False

    def _chain_into(
        self, chain: list[tuple[str, _Spec]], dir_rel: str, listing: list[os.DirEntry[str]] | None = None
    ) -> list[tuple[str, _Spec]]:
        """`chain` plus the ignore file of `dir_rel`, if any. A listing of the folder saves a stat."""
        if (
            listing is not None
            and dir_rel not in self._specs
            and not any(e.name == ".gitignore" for e in listing)
        ):
            self._specs[dir_rel] = None
        spec = self._spec_for(dir_rel)
        return [*chain, (dir_rel, spec)] if spec is not None else chain


def walk(
    root: Path,
    start: Path,
    *,
    recursive: bool = True,
    ignore: IgnoreRules | None = None,
    include_dirs: bool = False,
) -> Iterator[Entry]:
    """Yield entries under `start` (inside `root`, both resolved), sorted by name, depth first.

    `start` itself is walked even if ignored (see the module docstring). Folders are yielded only when
    `include_dirs` is true. Symlinks are yielded as entries but never followed into; callers decide whether a
    symlinked file may be used.
    """
    for path, rel, kind in scan(root, start, recursive=recursive, ignore=ignore, include_dirs=include_dirs):
        yield Entry(Path(path), rel, kind == "dir", kind == "link")


def scan(
    root: Path,
    start: Path,
    *,
    recursive: bool = True,
    ignore: IgnoreRules | None = None,
    include_dirs: bool = False,
    listed: list[str] | None = None,
) -> Iterator[tuple[str, str, Kind]]:
    """`walk` as `(absolute path, rel, kind)` tuples, in the same order and with the same skip rules.

    `listed`, if given, gets the path of every folder the walk lists (what `walk_cache` watches)."""
    rules = ignore if ignore is not None else IgnoreRules(root)
    start_rel = "" if start == root else start.relative_to(root).as_posix()
    chain: list[tuple[str, _Spec]] = []
    if start_rel:
        parts = start_rel.split("/")
        for depth in range(len(parts)):
            chain = rules._chain_into(chain, "/".join(parts[:depth]))
    children = _list_folder(str(start))
    if children is None:
        return
    if listed is not None:
        listed.append(str(start))
    chain = rules._chain_into(chain, start_rel, children)
    # A stack of folders being listed, each with its remaining children: depth first without recursion.
    stack = [(iter(children), start_rel, chain)]
    while stack:
        it, folder_rel, chain = stack[-1]
        child = next(it, None)
        if child is None:
            stack.pop()
            continue
        name = child.name
        rel = f"{folder_rel}/{name}" if folder_rel else name
        try:
            is_link = child.is_symlink()
            is_dir = not is_link and child.is_dir(follow_symlinks=False)
            kind: Kind = "dir" if is_dir else "link" if is_link else "file" if child.is_file() else "other"
        except OSError:
            continue
        has_rules = bool(chain) or rules._exclude is not None
        if not is_dir:
            if not has_rules or not rules._ignored_by(chain, rel, is_dir=False):
                yield child.path, rel, kind
            continue
        if name in SKIPPED_DIR_NAMES or (has_rules and rules._ignored_by(chain, rel, is_dir=True)):
            continue
        grandchildren: list[os.DirEntry[str]] | None = None
        if recursive:
            # The folder is listed anyway, so its listing tells whether it is a virtualenv.
            grandchildren = _list_folder(child.path)
            if listed is not None and grandchildren is not None:
                listed.append(child.path)
            if grandchildren is not None and any(c.name in _VENV_MARKERS for c in grandchildren):
                continue
        elif is_skipped_dir(Path(child.path), name):
            continue
        if include_dirs:
            yield child.path, rel, "dir"
        if recursive and grandchildren:
            stack.append((iter(grandchildren), rel, rules._chain_into(chain, rel, grandchildren)))


def _list_folder(folder: str) -> list[os.DirEntry[str]] | None:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return None
