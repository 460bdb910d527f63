"""Whether a path is, holds or is another name of a protected file, and the sentence that refuses it.

A refusal is raised (`Refusal`) so the check stops at the first. A path the command names plainly is refused
always; one it reaches another way (a glob, a link, an archive's member) only where commands run without
the OS sandbox, which makes protected files read-only. Another hard link of a protected file is refused
either way: bubblewrap makes a path read-only, not the file's other names.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from architect_nb.execution.guardrails.guarded_files import GuardedFiles
from architect_nb.paths.globs import PathGlobs

__all__ = ["NAME_IT", "ProtectedFiles", "Refusal", "Verdicts"]

NAME_IT = (
    "Name the files it should change (plainly, without globs or variables), change them with the file tools, "
    "or ask the user."
)
_SANDBOX = "(With the OS sandbox on, protected files are read-only to commands.)"

#: (how the path relates to the protected one, the protected path, the pattern it matches)
Why = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class ProtectedFiles:
    """What the check needs to know: the workspace, the patterns, and the protected files on disk now."""

    workspace: str
    globs: PathGlobs
    on_disk: Callable[[], GuardedFiles]
    #: Judge the unnamed forms too: commands run without the OS sandbox.
    unnamed: bool
    #: `workspace.read_roots` (resolved): a command may change nothing in them.
    read_roots: tuple[str, ...] = ()


def _no_file(_rel: str) -> bool:
    return False


class Refusal(Exception):  # noqa: N818 (not an error: the check's verdict, raised to stop at the first)
    """The sentence for the model."""


class Verdicts:
    """Verdicts on paths, for one command."""

    def __init__(self, guard: ProtectedFiles) -> None:
        self.guard = guard
        self.unnamed = guard.unnamed
        self.root = guard.workspace.rstrip("/")
        self._files: GuardedFiles | None = None
        self.program = "it"  # the program being judged, for the refusal
        #: Changes the check cannot decide (inline code given a protected file's name): asked about.
        self.doubts: list[str] = []

    def files(self) -> GuardedFiles:
        """The protected files on disk now (the workspace is scanned on first use; none without patterns)."""
        if self._files is None:
            self._files = (
                self.guard.on_disk() if self.guard.globs else GuardedFiles.of(self.root, [], [], _no_file)
            )
        return self._files

    def rel(self, path: str) -> str | None:
        """`path` relative to the workspace; None outside it, where no file is protected."""
        if path == self.root:
            return "."
        if path.startswith(self.root + "/"):
            return path[len(self.root) + 1 :]
        return None

    def within_workspace(self, path: str) -> bool:
        return self.rel(os.path.realpath(path)) is not None

    def shown(self, path: str) -> str:
        rel = self.rel(path)
        return rel if rel is not None else path

    def pattern_of(self, path: str) -> str:
        return self.guard.globs.match(self.rel(path) or path) or ""

    def why(self, path: str, *, tree: bool = False, links: bool = True) -> Why | None:
        """Why `path` is guarded: it is or (`tree`) holds a protected file, or (`links`) is another name of
        one."""
        found = self._protected(path, tree)
        if found is not None or not links:
            return found
        real = os.path.realpath(path)
        if real != path:
            found = self._protected(real, tree)
            if found is not None:
                return ("another name (a link) of", found[1], found[2])
        return self.hard_link(path)

    def hard_link(self, path: str) -> Why | None:
        same = self.files().same_file(path) if os.path.isfile(path) else None
        if same is None or same == path:
            return None
        return ("another name (a hard link) of", same, self.pattern_of(same))

    def _protected(self, path: str, tree: bool) -> Why | None:
        rel = self.rel(path)
        if rel is None:
            return None
        globs = self.guard.globs
        pattern = globs.match(rel)
        if pattern is not None:
            return ("which is", path, pattern)
        if not tree:
            return None
        inner = globs.inside(rel)  # a pattern answers without scanning the workspace
        if inner is not None:
            return ("which holds", next(self.files().under(path), path) if self.unnamed else path, inner)
        held = next(self.files().under(path), None)
        return ("which holds", held, self.pattern_of(held)) if held is not None else None

    def hit(self, path: str, verb: str, *, named: bool, tree: bool = False, via: str = "") -> None:
        """Refuse if the command's change of `path` (`verb`) would touch a protected file. `named`: the
        command names the path plainly; `via`: how it names it otherwise (for the refusal)."""
        if not named and not self.unnamed:
            return
        self._read_root_hit(path, verb, tree=tree, via=via)
        if not self.guard.globs:
            return
        reason = self.why(path, tree=tree, links=self.unnamed)
        if reason is None and not self.unnamed:
            reason = self.hard_link(path)
        if reason is None:
            return
        what, hit, pattern = reason
        if named and what in ("which is", "which holds"):
            raise Refusal(
                f"The command {verb} '{self.shown(path)}', which is or holds a protected file (matches "
                f"'{pattern}'). Leave it unchanged, or ask the user."
            )
        said = f"{self.program} {verb} '{self.shown(path)}'" + (f" ({via})" if via else "")
        if what == "which is":
            self.refuse(said, "", pattern)
        self.refuse(f"{said}, {what}", hit, pattern, always=named)

    def _read_root_hit(self, path: str, verb: str, *, tree: bool, via: str) -> None:
        """Refuse a change in a read root (through links too), or (`tree`) of a folder holding one."""
        real = os.path.realpath(path)
        for root in self.guard.read_roots:
            inside = any(p == root or p.startswith(root + "/") for p in (path, real))
            holds = tree and any(root.startswith(p.rstrip("/") + "/") for p in (path, real))
            if inside or holds:
                how = f" ({via})" if via else ""
                where = "is in" if inside else "holds"
                raise Refusal(
                    f"The command {verb} '{path}'{how}, which {where} a read-only data folder ({root}, "
                    "workspace.read_roots). Write inside the workspace instead."
                )

    def refuse(
        self, what: str, hit: str, pattern: str = "", advice: str = NAME_IT, *, always: bool = False
    ) -> None:
        """Refuse an unnamed change of the protected file `hit`, unless the sandbox holds it (`always`: the
        sandbox would not)."""
        if not (self.unnamed or always):
            return
        if hit and not pattern:
            pattern = self.pattern_of(hit)
        matches = f" (matches '{pattern}')" if pattern else ""
        shown = f" '{self.shown(hit)}'" if hit else ""
        sandbox = "" if always and not self.unnamed else f" {_SANDBOX}"
        raise Refusal(
            "The command may change a protected file without naming it: "
            f"{what}{shown}{matches}. {advice}{sandbox}"
        )

    def doubt(self, why: str) -> None:
        """Note a change of a protected file the check cannot decide, unless the sandbox holds it: the call is
        asked about in the confirmation modes, and refused in yolo."""
        if self.unnamed and self.guard.globs:
            self.doubts.append(f"{why} {_SANDBOX}")

    def unknown(self, why: str, advice: str = NAME_IT) -> None:
        """Refuse a change the check cannot judge (names known only at run time), unless the sandbox holds."""
        if self.unnamed and self.guard.globs:
            raise Refusal(
                f"The command may change a protected file without naming it: {why} {advice} {_SANDBOX}"
            )
