"""git commands that rewrite the work tree, judged by asking the repository (`git_state`) which protected
files each one touches: what changed between the commits it moves to, the local changes it discards, the
untracked files it removes, and the paths it restores or removes (git matches wildcards itself).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence

from architect_nb.execution.guardrails.shell_runs import Run
from architect_nb.execution.guardrails.writes.git_state import GitRepo
from architect_nb.execution.guardrails.writes.write_targets import Targets
from architect_nb.tools.commands.programs.effects import GitCheckout, GitTree
from architect_nb.tools.commands.shell_words import Word

__all__ = ["git_checkout", "git_tree", "pathspecs"]

_GLOB = frozenset("*?[")


def pathspecs(targets: Targets, words: Sequence[Word], verb: str, run: Run, bases: tuple[str, ...]) -> None:
    for word in words:
        value = word.value
        if value is not None and value.startswith(":"):
            targets.verdicts.unknown(f"git gets the pathspec '{value}', whose magic is not read here.")
            continue
        if value is not None and _GLOB & set(value) and not word.globbed:
            pattern = value.lower()
            for base in bases:
                for path in targets.verdicts.files().under(targets.verdicts.root):
                    rel = os.path.relpath(path, base).lower()
                    if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern):
                        targets.verdicts.refuse(f"git {verb} what '{value}' matches, including", path)
            continue
        for target in targets.candidates(word, run, bases, verb):
            targets.verdicts.hit(target.path, verb, named=target.named, tree=True, via=target.via)


def git_checkout(targets: Targets, checkout: GitCheckout, run: Run, bases: tuple[str, ...]) -> None:
    target = checkout.target.value
    if target is None:
        targets.verdicts.unknown("git checkout gets a name known only when it runs.")
        return
    for base in bases:
        repo = GitRepo.around(base)
        rev = "@{-1}" if target == "-" else target
        if repo is not None and repo.is_commit(rev):
            tree = GitTree(f"git checkout {target}", pairs=(("HEAD", rev),), local=checkout.force)
            git_tree(targets, tree, run, (base,))
            if checkout.paths:
                pathspecs(targets, checkout.paths, "restores", run, (base,))
        else:
            pathspecs(targets, (checkout.target, *checkout.paths), "restores", run, (base,))


def git_tree(targets: Targets, tree: GitTree, run: Run, bases: tuple[str, ...]) -> None:
    if not targets.verdicts.unnamed:
        return
    advice = (
        tree.advice
        or "Leave the protected files as they are (commit or stash the rest by path), or ask the user."
    )
    for base in bases:
        repo = GitRepo.around(base)
        if repo is None:
            continue
        within = [t.path for w in tree.paths for t in targets.candidates(w, run, (base,), "restores")]
        guarded = [
            f
            for f in targets.verdicts.files().under(repo.top)
            if not within or any(_under(f, w) for w in within)
        ]
        written: list[str] = []
        for before, after in tree.pairs:
            changed = repo.changed(before, after, merge_base=tree.merge)
            if changed is None:
                targets.verdicts.unknown(f"it cannot be told which files {tree.command} changes.", advice)
                continue
            written += changed
        for commit in tree.adds:
            written += repo.files_in(commit) or []  # none: a stash without untracked files
        for name in written:
            path = os.path.join(repo.top, name)
            if within and not any(_under(path, w) for w in within):
                continue
            reason = targets.verdicts.why(path)
            if reason is not None:
                targets.verdicts.refuse(f"{tree.command} rewrites", path, reason[2], advice)
        if not (tree.local or tree.untracked or tree.any) or not guarded:
            continue
        tracked = repo.tracked([os.path.relpath(f, repo.top) for f in guarded])
        if tracked is None:
            targets.verdicts.unknown(f"the repository cannot tell what {tree.command} rewrites.", advice)
            continue
        blobs, indexed = tracked
        for path in guarded:
            rel = os.path.relpath(path, repo.top)
            if tree.any and (rel in blobs or rel in indexed):
                targets.verdicts.refuse(f"{tree.command} may rewrite the tracked file", path, "", advice)
            if tree.local and rel in blobs and repo.differs(path, blobs[rel]):
                targets.verdicts.refuse(f"{tree.command} discards the changes to", path, "", advice)
            if tree.local and rel in indexed and rel not in blobs:
                targets.verdicts.refuse(f"{tree.command} removes the newly added", path, "", advice)
            if tree.untracked and rel not in indexed:
                targets.verdicts.refuse(f"{tree.command} removes the untracked", path, "", advice)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/") or fnmatch.fnmatch(path, folder)
