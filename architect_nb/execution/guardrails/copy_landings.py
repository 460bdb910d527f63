"""Where a copy, move or link lands (`cp`, `mv`, `install`, `ln`, `rsync`, `git mv`): the destination itself
or `dest/NAME`, and for a recursive copy every file of the source folder under it. A moved source is removed,
and a linked one gets another name, which a later write could go through.
"""

from __future__ import annotations

import os

from architect_nb.execution.guardrails.shell_runs import Run
from architect_nb.execution.guardrails.write_effects import Copy
from architect_nb.execution.guardrails.write_targets import Target, Targets

__all__ = ["copy"]

_MAX_WALKED = 10_000  # files of a source folder outside the workspace walked; more are refused as unknown
_GLOB = frozenset("*?[")


def copy(targets: Targets, copy: Copy, run: Run, bases: tuple[str, ...]) -> None:
    sources = [(w, targets.candidates(w, run, bases, copy.verb)) for w in copy.sources]
    for _word, found in sources:
        for source in found:
            if copy.removes:
                targets.verdicts.hit(source.path, "moves", named=source.named, tree=True, via=source.via)
            if copy.links:
                targets.verdicts.hit(
                    source.path, "makes another name (a link) for", named=False, via=source.via
                )
    for dest in targets.candidates(copy.dest, run, bases, copy.verb):
        into = copy.into
        if into is None and (len(copy.sources) > 1 or (copy.dest.value or "").endswith("/")):
            into = True
        for word, found in sources:
            for source in found:
                contents = (word.value or "").endswith("/." if not copy.contents else "/")
                _landing(
                    targets,
                    copy,
                    source,
                    dest.path,
                    into,
                    named=source.named and dest.named,
                    contents=contents,
                )


def _landing(
    targets: Targets, copy: Copy, source: Target, dest: str, into: bool | None, *, named: bool, contents: bool
) -> None:
    """Check where `source` lands: `dest` itself, or `dest/NAME` when dest is (or may be) a folder."""
    finals: list[str] = []
    via = source.via
    source_path = source.path
    name = os.path.basename(source_path.rstrip("/"))
    if contents and os.path.isdir(source_path):
        finals.append(dest)
    else:
        if into is not True and not (into is None and os.path.isdir(dest)):
            finals.append(dest)
        if into is True or (into is None and (os.path.isdir(dest) or not os.path.lexists(dest))):
            finals.append(os.path.join(dest, os.path.relpath(source_path, "/") if copy.parents else name))
    for final in finals:
        targets.verdicts.hit(final, copy.verb, named=named, tree=copy.removes, via=via)
        if copy.tree and os.path.isdir(source_path):
            _tree_lands(targets, source_path, final, copy.verb)


def _tree_lands(targets: Targets, source: str, final: str, verb: str) -> None:
    """A folder copied to `final`: the protected files under it land under `final`, and so does any file
    it holds that lands where a folder pattern protects every name (`.github/**`)."""
    if not targets.verdicts.unnamed:
        return
    for path in targets.verdicts.files().under(source):
        via = f"it copies '{targets.verdicts.shown(path)}' there"
        targets.verdicts.hit(os.path.join(final, os.path.relpath(path, source)), verb, named=False, via=via)
    rel = targets.verdicts.rel(final)
    if rel is None:
        if not targets.verdicts.within_workspace(source):
            _outside_tree(targets, source, final, verb)
        return
    globs = targets.verdicts.guard.globs
    if globs.covers(rel):
        targets.verdicts.refuse(f"{verb} the folder '{targets.verdicts.shown(source)}' to", final)
    prefix = "" if rel == "." else rel + "/"
    for pattern in globs.patterns:
        head = _literal_head(pattern)
        if "/" in pattern and head.startswith(prefix) and len(head) > len(prefix):
            inside = os.path.join(source, head[len(prefix) :])
            if os.path.lexists(inside) and globs.covers(head):
                targets.verdicts.refuse(
                    f"{verb} '{targets.verdicts.shown(inside)}' to",
                    os.path.join(final, head[len(prefix) :]),
                    pattern,
                )
    if not targets.verdicts.within_workspace(source):
        _outside_tree(targets, source, final, verb)


def _outside_tree(targets: Targets, source: str, final: str, verb: str) -> None:
    """A folder from outside the workspace: its files are walked (the scan only knows the workspace)."""
    seen = 0
    for parent, _dirs, names in os.walk(source):
        for name in names:
            seen += 1
            if seen > _MAX_WALKED:
                targets.verdicts.unknown(f"{verb} a folder too large to check, '{source}'.")
            path = os.path.join(final, os.path.relpath(os.path.join(parent, name), source))
            targets.verdicts.hit(
                path, verb, named=False, via=f"it copies '{os.path.join(parent, name)}' there"
            )


def _literal_head(pattern: str) -> str:
    """`.github/**` -> `.github`, `data/raw/*` -> `data/raw`: the folders before the first wildcard."""
    parts: list[str] = []
    for part in pattern.split("/"):
        if _GLOB & set(part):
            break
        parts.append(part)
    return "/".join(parts)
