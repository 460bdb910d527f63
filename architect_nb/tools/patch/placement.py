"""Where the hunks of a patch go: all of them decided together, or a refusal that names the places.

Every place where a hunk's context and removed lines match exactly is a candidate (if there is none, every
place where they match once trailing whitespace and line endings are ignored); where git's hunk heading (the
function or class line after the second '@@') names the line above only some of them, those are kept. Of all
the placements that keep the hunks in file order without overlap, the one taken needs the fewest corrections
to the headers' line numbers: first the fewest changes of offset from one hunk to the next (a whole patch off
by the same amount, as when a model miscounts or lines were added above, is one correction), then the fewest
lines moved. So a hunk whose header is right stays where it says, and of twin blocks the one that lets the
hunks apply at a consistent offset is taken.

A hunk is refused, never guessed at, when another place fits about as well (as many offset changes, and at
most `MARGIN` lines further from where the headers point): the error names the lines, so the model can fix its
header. GNU patch's and git's rule breaks such a tie: a hunk with less context after its change than before it
belongs at the end of the file, and one with less before than after at the start.

A hunk without line numbers is placed by its lines alone and must fit one place only. A hunk without context
or removed lines (a zero-context insertion) goes where its header says, moved by its neighbours' offset, and
is refused when its neighbours moved by different amounts, since nothing tells which way it went.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

from architect_nb.tools.filesystem.textmatch import loose
from architect_nb.tools.patch import refusals
from architect_nb.tools.patch.filelines import FileLines, heading_agrees
from architect_nb.tools.patch.parse import Hunk
from architect_nb.tools.patch.refusals import HunkError

__all__ = ["MARGIN", "HunkError", "Spot", "place_hunks"]

#: Two places whose distances from where the headers point differ by at most this many lines both fit.
MARGIN = 20
_CAP = 64  # candidates per hunk kept for the search (the nearest to where its header may point)
_INF = (1 << 40, 1 << 40)

Cost = tuple[int, int]  # (offset changes, lines moved)


@dataclass(frozen=True, slots=True)
class Spot:
    """Where a hunk goes: the 0-based line its old lines start at, whether they matched only loosely, and
    where its header (moved by the previous hunk's offset) put it."""

    start: int
    loose: bool
    expected: int | None


@dataclass(slots=True)
class _Item:
    hunk: Hunk
    old: list[str]
    header: int | None  # 0-based: where its old lines start, or the line an insertion goes before
    cands: list[int]
    loose: bool
    lead: int  # context lines before the first change
    trail: int  # context lines after the last change


def place_hunks(f: FileLines, hunks: list[Hunk], shown: str = "the file") -> list[Spot]:
    """Decide where every hunk goes. Raises `HunkError`, naming the hunk, when one cannot be placed."""
    items = [_prepare(f, hunk) for hunk in hunks]
    _check_found(f, items, shown)
    nodes = [i for i, it in enumerate(items) if it.old and it.header is not None]
    hints = _hints(items, nodes)
    for i in nodes:
        _cap(items[i], hints)
    while True:  # each round either decides every numbered hunk or fixes one by a tie-break rule
        totals = _solve(f, items, nodes, shown)
        picks: list[int] = []
        for t, i in enumerate(nodes):
            start, rivals = _decide(items[i], totals[t], len(f))
            if rivals:
                raise HunkError(
                    refusals.rivals(items[i].hunk, items[i].header, rivals, len(items), shown), ambiguous=True
                )
            if start is None:
                break
            picks.append(start)
        if len(picks) == len(nodes):
            return _finish(f, items, dict(zip(nodes, picks, strict=True)), shown)


# ---------------------------------------------------------------------------------------------- candidates


def _prepare(f: FileLines, hunk: Hunk) -> _Item:
    old = [line.text for line in hunk.old]
    header = None
    if hunk.old_start is not None:
        header = max(0, hunk.old_start - 1) if old else hunk.old_start
    kinds = [line.kind for line in hunk.lines]
    lead = next((k for k, kind in enumerate(kinds) if kind != " "), len(kinds))
    trail = next((k for k, kind in enumerate(reversed(kinds)) if kind != " "), len(kinds))
    cands: list[int] = []
    is_loose = False
    if old:
        cands = f.find_all(old, False)
        if not cands:
            is_loose = True
            cands = f.find_all([loose(t) for t in old], True)
        if hunk.old[-1].no_eol:  # its last old line has no newline: it is the file's last line
            at_end = [c for c in cands if c + len(old) == len(f)]
            cands = at_end or cands
        if hunk.heading and len(cands) > 1:  # git's function context names the line the hunk is under
            under = [c for c in cands if heading_agrees(f.heading_before(c), hunk.heading)]
            cands = under or cands
    return _Item(hunk, old, header, cands, is_loose, lead, trail)


def _hints(items: list[_Item], nodes: list[int]) -> set[int]:
    """Offsets worth keeping candidates near: none, and those of hunks that fit one place only."""
    hints = {0}
    for i in nodes:
        it = items[i]
        if len(it.cands) == 1 and it.header is not None:
            hints.add(it.cands[0] - it.header)
    return hints


def _cap(it: _Item, hints: set[int]) -> None:
    if len(it.cands) <= _CAP or it.header is None:
        return
    header = it.header
    kept: set[int] = set()
    for hint in sorted(hints)[:8]:
        kept.update(sorted(it.cands, key=lambda c: abs(c - header - hint))[: _CAP // 2])
    it.cands = sorted(kept)


def _check_found(f: FileLines, items: list[_Item], shown: str) -> None:
    delta = 0
    for it in items:
        if not it.old:
            continue
        if not it.cands:
            expected = None if it.header is None else max(0, it.header + delta)
            raise HunkError(refusals.mismatch(f, it.hunk, expected, len(items), shown))
        if it.header is not None:
            header = it.header
            delta = min(it.cands, key=lambda c: abs(c - header)) - header
        if it.header is None and len(it.cands) > _CAP:
            raise HunkError(refusals.bare(it.hunk, it.cands, len(items), shown), ambiguous=True)


# ---------------------------------------------------------------------------------------------- the search


def _step(d_from: int, d_to: int) -> Cost:
    return (0, 0) if d_from == d_to else (1, abs(d_to - d_from))


def _add(a: Cost, b: Cost) -> Cost:
    return (a[0] + b[0], a[1] + b[1])


def _fits_between(f: FileLines, items: list[_Item], after: int, before: int, lo: int, hi: int) -> bool:
    """Whether the hunks without numbers between hunks `after` and `before` fit, in order, in [lo, hi)."""
    for j in range(after + 1, before):
        it = items[j]
        if not it.old:
            continue
        k = bisect.bisect_left(it.cands, lo)
        if k == len(it.cands) or it.cands[k] + len(it.old) > hi:
            return False
        lo = it.cands[k] + len(it.old)
    return True


def _solve(f: FileLines, items: list[_Item], nodes: list[int], shown: str) -> list[list[Cost]]:
    """For every numbered hunk and each of its candidates, the cost of the best whole placement through it."""
    cands = [items[i].cands for i in nodes]
    m = len(nodes)
    fwd: list[list[Cost]] = []
    for t, i in enumerate(nodes):
        header = items[i].header or 0
        row: list[Cost] = []
        for c in cands[t]:
            if t == 0:
                row.append(_step(0, c - header) if _fits_between(f, items, -1, i, 0, c) else _INF)
                continue
            p = nodes[t - 1]
            p_len, p_header = len(items[p].old), items[p].header or 0
            best = _INF
            for c2, cost2 in zip(cands[t - 1], fwd[t - 1], strict=True):
                if c2 + p_len > c:
                    break
                if cost2 != _INF and _fits_between(f, items, p, i, c2 + p_len, c):
                    best = min(best, _add(cost2, _step(c2 - p_header, c - header)))
            row.append(best)
        fwd.append(row)
    bwd: list[list[Cost]] = [[] for _ in nodes]
    for t in range(m - 1, -1, -1):
        i = nodes[t]
        i_len, header = len(items[i].old), items[i].header or 0
        row = []
        for c in cands[t]:
            if t == m - 1:
                ok = _fits_between(f, items, i, len(items), c + i_len, len(f))
                row.append((0, 0) if ok else _INF)
                continue
            n = nodes[t + 1]
            n_header = items[n].header or 0
            best = _INF
            for c2, cost2 in zip(cands[t + 1], bwd[t + 1], strict=True):
                if c2 < c + i_len or cost2 == _INF or not _fits_between(f, items, i, n, c + i_len, c2):
                    continue
                best = min(best, _add(cost2, _step(c - header, c2 - n_header)))
            row.append(best)
        bwd[t] = row
    totals = [
        [_INF if _INF in (a, b) else _add(a, b) for a, b in zip(fwd[t], bwd[t], strict=True)]
        for t in range(m)
    ]
    for t in range(m):
        if all(cost == _INF for cost in totals[t]):
            raise HunkError(
                refusals.order(items[nodes[t]].hunk, items[nodes[t]].cands, len(items), shown), ambiguous=True
            )
    return totals


def _best(cands: list[int], costs: list[Cost]) -> tuple[Cost, int]:
    return min(zip(costs, cands, strict=True))


def _decide(it: _Item, costs: list[Cost], n_lines: int) -> tuple[int | None, list[int]]:
    """(the start, no rivals) when one place is clearly best; (None, []) when a tie-break rule picked one and
    fixed the hunk's candidates to it; (start, rivals) when it cannot be told."""
    best_cost, best = _best(it.cands, costs)
    group = [
        c
        for cost, c in zip(costs, it.cands, strict=True)
        if cost != _INF and cost[0] == best_cost[0] and cost[1] - best_cost[1] <= MARGIN
    ]
    if len(group) == 1:
        return best, []
    picked = _edge_rule(it, group, n_lines)
    if picked is None:
        return best, sorted(group)
    it.cands = [picked]
    return None, []


def _edge_rule(it: _Item, group: list[int], n_lines: int) -> int | None:
    """GNU patch's and git's rule: less context after the change than before it means the end of the file
    (and the mirror rule, the start)."""
    if it.trail < it.lead:
        at_end = [c for c in group if c + len(it.old) == n_lines]
        return at_end[0] if len(at_end) == 1 else None
    if it.lead < it.trail:
        at_start = [c for c in group if c == 0]
        return at_start[0] if len(at_start) == 1 else None
    return None


# --------------------------------------------------------------------------- hunks placed by their neighbours


def _finish(f: FileLines, items: list[_Item], chosen: dict[int, int], shown: str) -> list[Spot]:
    """Place the hunks without numbers (in the gaps the numbered ones leave) and zero-context insertions."""
    total = len(items)
    starts: dict[int, int] = dict(chosen)
    anchors = sorted(chosen)
    bounds = [-1, *anchors, total]
    for a, b in itertools.pairwise(bounds):
        lo = 0 if a < 0 else chosen[a] + len(items[a].old)
        hi = len(f) if b == total else chosen[b]
        starts.update(_place_bare(items, a, b, lo, hi, shown))
    offsets = {i: chosen[i] - (items[i].header or 0) for i in anchors}
    spots: list[Spot] = []
    delta = 0
    end = 0  # the first line after the previous hunk
    for i, it in enumerate(items):
        expected = None if it.header is None else max(0, it.header + delta)
        if not it.old:
            start = _place_insertion(f, items, i, offsets, end, total)
            expected = start if it.header is not None else None
        else:
            start = starts[i]
            if i in offsets:
                delta = offsets[i]
        if start < end:
            raise HunkError(refusals.order(it.hunk, it.cands, total, shown), ambiguous=True)
        spots.append(Spot(start=start, loose=it.loose, expected=expected))
        end = start + len(it.old)
    return spots


def _place_bare(items: list[_Item], a: int, b: int, lo: int, hi: int, shown: str) -> dict[int, int]:
    """The one place of each hunk without numbers between hunks a and b, within [lo, hi)."""
    between = [j for j in range(a + 1, b) if items[j].old]
    if not between:
        return {}
    early: dict[int, int] = {}
    pos = lo
    for j in between:
        it = items[j]
        k = bisect.bisect_left(it.cands, pos)
        if k == len(it.cands) or it.cands[k] + len(it.old) > hi:
            raise HunkError(refusals.order(it.hunk, it.cands, len(items), shown), ambiguous=True)
        early[j] = it.cands[k]
        pos = early[j] + len(it.old)
    late: dict[int, int] = {}
    pos = hi
    for j in reversed(between):
        it = items[j]
        late[j] = it.cands[bisect.bisect_right(it.cands, pos - len(it.old)) - 1]
        pos = late[j]
    for j in between:
        if early[j] != late[j]:
            fits = [c for c in items[j].cands if early[j] <= c <= late[j]]
            raise HunkError(refusals.bare(items[j].hunk, fits, len(items), shown), ambiguous=True)
    return early


def _place_insertion(
    f: FileLines, items: list[_Item], i: int, offsets: dict[int, int], end: int, total: int
) -> int:
    it = items[i]
    hunk = it.hunk
    if it.header is None:
        if not f.lines:
            return 0
        raise HunkError(
            f"Hunk {hunk.number} of {total} ({hunk.header}) has neither line numbers nor context lines, so "
            "there is nothing to place it by. Add a few unchanged lines around the change. "
            "No hunk was applied; the file is unchanged."
        )
    before = [offsets[j] for j in sorted(offsets) if j < i][-1:]
    after = [offsets[j] for j in sorted(offsets) if j > i][:1]
    moved = set(before + after)
    if len(moved) > 1:
        raise HunkError(
            f"Hunk {hunk.number} of {total} ({hunk.header}) only adds lines, with no context to place them "
            f"by, and the hunks around it moved by different amounts ({before[0]:+d} and {after[0]:+d} "
            "lines), so it could belong at either. Add a few unchanged lines around the change. "
            "No hunk was applied; the file is unchanged.",
            ambiguous=True,
        )
    start = it.header + (moved.pop() if moved else 0)
    if not end <= start <= len(f):
        raise HunkError(
            f"Hunk {hunk.number} of {total} ({hunk.header}) inserts after line {start}, but "
            + (
                f"the file has only {len(f)} lines."
                if start > len(f)
                else "that is inside the previous hunk."
            )
            + " Add context lines so it can be placed. No hunk was applied; the file is unchanged."
        )
    return start
