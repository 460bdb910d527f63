"""Where a copy, move or link lands (`cp`, `mv`, `install`, `ln`, `rsync`, `git mv`): the destination itself
or `dest/NAME`, and for a recursive copy every file of the source folder under it. A moved source is removed,
and a linked one gets another name, which a later write could go through.
"""

from __future__ import annotations

import os

from architect_nb.execution.guardrails.shell_runs import Run
from architect_nb.execution.guardrails.writes.write_targets import Target, Targets
from architect_nb.tools.commands.programs.effects import Copy

__all__ = ["copy"]

_MAX_WALKED = 10_000  # files of a source folder outside the workspace walked; more are refused as unknown
_GLOB = frozenset("*?[")


def copy(targets: Targets, effect: Copy, run: Run, bases: tuple[str, ...]) -> None:
    """Refuse a copy, move or link that removes, renames or lands on a protected file."""
    sources = [(w, targets.candidates(w, run, bases, effect.verb)) for w in effect.sources]
    for _word, found in sources:
        for source in found:
            if effect.removes:
                targets.verdicts.hit(source.path, "moves", named=source.named, tree=True, via=source.via)
            if effect.links:
                targets.verdicts.hit(
                    source.path, "makes another name (a link) for", named=False, via=source.via
                )
    for dest in targets.candidates(effect.dest, run, bases, effect.verb):
        into = effect.into
        if into is None and (len(effect.sources) > 1 or (effect.dest.value or "").endswith("/")):
            into = True
        for word, found in sources:
            written = word.value or ""
            for source in found:
                landing = _Landing(effect, source, written, into, named=source.named and dest.named)
                landing.check(targets, dest.path)


class _Landing:
    """One source of a copy, and how it lands in a destination."""

    def __init__(self, effect: Copy, source: Target, written: str, into: bool | None, *, named: bool) -> None:
        self.effect = effect
        self.source = source
        self.into = into
        self.named = named
        # `cp -r dir/. dest` and `rsync dir/ dest` put the folder's contents, not the folder, in dest.
        self.contents = written.endswith("/" if effect.contents else "/.")
        self.name = written.lstrip("/") if effect.parents and written else os.path.basename(source.path)

    def finals(self, dest: str) -> list[str]:
        """Where the source lands: `dest` itself, or `dest/NAME` when dest is (or may be) a folder."""
        if self.contents and os.path.isdir(self.source.path):
            return [dest]
        found = []
        into = self.into
        if into is not True and not (into is None and os.path.isdir(dest)):
            found.append(dest)
        if into is True or (into is None and (os.path.isdir(dest) or not os.path.lexists(dest))):
            found.append(os.path.normpath(os.path.join(dest, self.name)))
        return found

    def check(self, targets: Targets, dest: str) -> None:
        effect = self.effect
        for final in self.finals(dest):
            targets.verdicts.hit(
                final, effect.verb, named=self.named, tree=effect.removes, via=self.source.via
            )
            if effect.tree and os.path.isdir(self.source.path):
                _tree_lands(targets, self.source.path, final, effect.verb)


def _tree_lands(targets: Targets, source: str, final: str, verb: str) -> None:
    """A folder copied to `final`: the protected files under it land under `final`, and so does any file
    it holds that lands where a folder pattern protects every name (`.github/**`)."""
    if not targets.verdicts.unnamed or not targets.verdicts.guard.globs:
        return  # where a folder lands in a read root, `hit` refused the landing itself
    for path in targets.verdicts.files().under(source):
        via = f"it copies '{targets.verdicts.shown(path)}' there"
        targets.verdicts.hit(os.path.join(final, os.path.relpath(path, source)), verb, named=False, via=via)
    rel = targets.verdicts.rel(final)
    if rel is None:
        return  # it lands outside the workspace, where no file is protected
    globs = targets.verdicts.guard.globs
    if globs.covers(rel):
        said = f"{targets.verdicts.program} puts the folder '{targets.verdicts.shown(source)}' at"
        targets.verdicts.refuse(said, final)
    prefix = "" if rel == "." else rel + "/"
    for pattern in globs.patterns:
        head = _literal_head(pattern)
        if "/" in pattern and head.startswith(prefix) and len(head) > len(prefix):
            inside = os.path.join(source, head[len(prefix) :])
            if os.path.lexists(inside) and globs.covers(head):
                targets.verdicts.refuse(
                    f"{targets.verdicts.program} puts '{targets.verdicts.shown(inside)}' at",
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
