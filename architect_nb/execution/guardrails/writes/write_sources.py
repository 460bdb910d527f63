"""Changes only the disk can tell: where an archive's members land, and which files a patch changes. The
archive is listed and the patch read before the command runs (`archives`, `patch_targets`).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence

from architect_nb.execution.guardrails.shell_runs import Run
from architect_nb.execution.guardrails.writes.archives import members
from architect_nb.execution.guardrails.writes.patch_targets import MAX_PATCH_BYTES, patched_files
from architect_nb.execution.guardrails.writes.write_targets import Targets
from architect_nb.tools.commands.programs.effects import Extract, PatchFrom

__all__ = ["extract", "patch"]

_LIST_FIRST = (
    "List the archive first (tar tf, unzip -l) and extract only the members you need, or extract it into a "
    "new folder and copy what you need by name."
)


def extract(targets: Targets, effect: Extract, run: Run, bases: tuple[str, ...]) -> None:
    advice = _LIST_FIRST
    if effect.archive is None:
        targets.verdicts.unknown(
            "it extracts an archive from its input, which cannot be listed beforehand.", advice
        )
        return
    folders = targets.folders(effect.directory, run, bases) if effect.directory is not None else bases
    folders = tuple(f for f in folders if targets.verdicts.within_workspace(f))
    if not folders:
        return  # it extracts outside the workspace, where no file is protected
    for found in targets.candidates(effect.archive, run, bases, "extracts"):
        archive = found.path
        names = members(archive, effect.kind)
        if names is None:
            targets.verdicts.unknown(
                f"the archive '{targets.verdicts.shown(archive)}' cannot be listed{_missing(archive)}.",
                advice,
            )
            continue
        wanted = [w.value for w in effect.members]
        for name in names:
            parts = [p for p in name.split("/") if p not in ("", ".")][effect.strip :]
            if not parts or (wanted and not _member_wanted(name, wanted)):
                continue
            if _excluded(name, effect.excludes):
                continue
            rel = parts[-1] if effect.flat else "/".join(parts)
            for folder in folders:
                final = os.path.normpath(os.path.join(folder, rel))
                if effect.keep_old and os.path.lexists(final):
                    continue
                reason = targets.verdicts.why(final)
                if reason is not None:
                    targets.verdicts.refuse(
                        f"the archive '{targets.verdicts.shown(archive)}' holds '{name}', which lands on",
                        final,
                        reason[2],
                        advice,
                    )


def patch(targets: Targets, effect: PatchFrom, run: Run, bases: tuple[str, ...]) -> None:
    if effect.source is not None:
        texts = []
        for path in (t.path for t in targets.candidates(effect.source, run, bases, "patches")):
            try:
                with open(path, "rb") as handle:
                    data = handle.read(MAX_PATCH_BYTES + 1)
            except OSError:
                targets.verdicts.unknown(
                    f"the patch '{targets.verdicts.shown(path)}' cannot be read{_missing(path)}."
                )
                continue
            if len(data) > MAX_PATCH_BYTES:
                targets.verdicts.unknown(f"the patch '{targets.verdicts.shown(path)}' is too large to check.")
            texts.append(data.decode("utf-8", "surrogateescape"))
    elif effect.text is not None and effect.text.value is not None:
        texts = [effect.text.value]
    else:
        targets.verdicts.unknown("it reads the patch from its input; give it as a file (patch -i FILE).")
        return
    folders = targets.folders(effect.directory, run, bases) if effect.directory is not None else bases
    for text in texts:
        for name in patched_files(text):
            parts = [p for p in name.split("/") if p]
            strips = range(len(parts)) if effect.strip is None else [min(effect.strip, len(parts) - 1)]
            for strip in strips:
                for folder in folders:
                    final = os.path.normpath(os.path.join(folder, *parts[strip:]))
                    reason = targets.verdicts.why(final)
                    if reason is not None:
                        targets.verdicts.refuse(f"the patch changes '{name}', which is", final, reason[2])


def _missing(path: str) -> str:
    if os.path.exists(path):
        return ""
    return " (it does not exist yet: make it in one command, and use it in the next)"


def _excluded(name: str, excludes: Sequence[str]) -> bool:
    """Whether an exclusion leaves the member out: tar matches a pattern against any run of the member's
    folders and name (`--exclude .github` leaves out `.github/x`); unzip against the whole name."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    runs = ["/".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)]
    for pattern in excludes:
        if pattern.startswith("zip:"):
            if fnmatch.fnmatchcase("/".join(parts), pattern[4:]):
                return True
        elif any(fnmatch.fnmatchcase(run, pattern) for run in runs):
            return True
    return False


def _member_wanted(name: str, wanted: Sequence[str | None]) -> bool:
    clean = name.removeprefix("./").rstrip("/")
    for one in wanted:
        if one is None:
            return True
        member = one.removeprefix("./").rstrip("/")
        if clean == member or clean.startswith(member + "/") or fnmatch.fnmatch(clean, member):
            return True
    return False
