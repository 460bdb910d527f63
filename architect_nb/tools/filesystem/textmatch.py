"""Line helpers shared by edit_file and apply_patch: splitting without losing endings, loose comparison,
and finding the lines of a file closest to text the model expected, to show it in an error.
"""

from __future__ import annotations

import difflib
from collections import defaultdict

__all__ = ["closest_window", "loose", "numbered", "split_ending", "split_lines"]

_SHOWN_WIDTH = 200
_MAX_WANTED = 40  # lines of the expected text used to score a window
_MAX_FUZZY_SCAN = 60_000  # file lines scanned by the fuzzy anchor search


def split_lines(text: str) -> list[str]:
    """Split on '\\n' only (never on form feeds or Unicode separators), keeping each line's ending."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def split_ending(line: str) -> tuple[str, str]:
    """`line` as (content, ending) where ending is '\\r\\n', '\\n' or ''."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    return line, ""


def loose(content: str) -> str:
    """The form compared by loose matching: trailing whitespace (and so any '\\r') dropped."""
    return content.rstrip()


def numbered(lines: list[str], first: int, width: int = 0) -> str:
    """`lines` prefixed with 1-based line numbers starting at `first`, long lines cut."""
    width = width or len(str(first + len(lines)))
    out = []
    for n, line in enumerate(lines, start=first):
        text = line.rstrip("\r\n")
        if len(text) > _SHOWN_WIDTH:
            text = text[:_SHOWN_WIDTH] + f" [... {len(text) - _SHOWN_WIDTH} more characters]"
        out.append(f"{n:>{width}} | {text}")
    return "\n".join(out)


def closest_window(file_lines: list[str], wanted: list[str], hint: int | None = None) -> tuple[int, float]:
    """Where in `file_lines` the block `wanted` most nearly occurs, judged on stripped lines.

    Returns (0-based start index, similarity 0..1); similarity 0 when nothing is alike. `hint` (an index)
    breaks ties in favour of the nearest window. Costs about one pass over the file.
    """
    want = [line.strip()[:_SHOWN_WIDTH] for line in wanted[:_MAX_WANTED]]
    if not file_lines or not any(want):
        return 0, 0.0
    have = [line.strip()[:_SHOWN_WIDTH] for line in file_lines]
    votes: dict[int, int] = defaultdict(int)
    where: dict[str, list[int]] = defaultdict(list)
    wanted_set = {w for w in want if w}
    for i, line in enumerate(have):
        if line in wanted_set:
            where[line].append(i)
    for offset, line in enumerate(want):
        if line and len(where[line]) <= 50:  # a line found everywhere ('}', 'return') says nothing
            for i in where[line]:
                votes[i - offset] += 1
    if not votes:
        _fuzzy_votes(have, want, votes)
    if not votes:
        return 0, 0.0
    best = sorted(votes.items(), key=lambda kv: -kv[1])[:8]
    # Scored with indentation kept, so that a block indented differently is not shown as identical.
    target = "\n".join(line.rstrip()[:_SHOWN_WIDTH] for line in wanted[:_MAX_WANTED])
    scored = []
    for voted, _ in best:
        start = max(0, min(voted, len(have) - 1))
        window = "\n".join(line.rstrip()[:_SHOWN_WIDTH] for line in file_lines[start : start + len(want)])
        ratio = difflib.SequenceMatcher(None, window, target).ratio()
        scored.append((ratio, -abs(start - hint) if hint is not None else 0, -start, start))
    ratio, _, _, start = max(scored)
    return start, ratio


def _fuzzy_votes(have: list[str], want: list[str], votes: dict[int, int]) -> None:
    """Votes from the file lines most like the longest expected lines (when none matches exactly)."""
    anchors = sorted((i for i, w in enumerate(want) if w), key=lambda i: -len(want[i]))[:3]
    scan = have[:_MAX_FUZZY_SCAN]
    for offset in anchors:
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(want[offset])
        found = []
        for i, line in enumerate(scan):
            matcher.set_seq1(line)
            if (
                matcher.real_quick_ratio() >= 0.6
                and matcher.quick_ratio() >= 0.6
                and (ratio := matcher.ratio()) >= 0.6
            ):
                found.append((ratio, i))
        for _, i in sorted(found, reverse=True)[:5]:
            votes[i - offset] += 1
