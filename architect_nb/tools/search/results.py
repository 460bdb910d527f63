"""Search results and how the model sees them: `path:line: text`, capped with a visible count of the rest."""

from __future__ import annotations

from dataclasses import dataclass, field

from architect_nb.paths.validators import visible
from architect_nb.redaction import default_redactor
from architect_nb.tools.metadata import ToolMetadata
from architect_nb.tools.search.scan import Line

__all__ = ["FileHits", "SearchOutcome", "format_outcome", "plural", "shown", "shown_line"]


def shown_line(text: str) -> str:
    """A matched (or context) line as the model sees it: secrets redacted, also a fragment of one that a clip
    of a long line cut through, and invisible characters escaped (tabs kept)."""
    cut_start = text.startswith("…")
    marker = text.rfind("… [line of ")
    body, tail = (text[:marker], text[marker:]) if marker >= 0 else (text, "")
    body = body[1:] if cut_start else body
    body = default_redactor().redact_cut(body, cut_start=cut_start, cut_end=marker >= 0)
    return ("…" if cut_start else "") + shown(body).replace("\\x09", "\t") + tail


def shown(text: str) -> str:
    """`text` safe to print and to send as UTF-8: undecodable file-name bytes and lone surrogates become
    U+FFFD, control and invisible characters become escapes."""
    if text.isascii() and text.isprintable():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")  # file names: back to their bytes
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    return visible(raw.decode("utf-8", "replace"))


@dataclass(slots=True)
class FileHits:
    """The matches in one file: how many lines match, and the lines to show (matches and their context).

    A notebook's lines are numbered in its cells' joined text, and `labels` names each shown line's place
    (`cell 3, line 2`), which is what the model sees instead of the number.
    """

    rel: str
    count: int
    lines: list[Line] = field(default_factory=list)
    labels: dict[int, str] | None = None


@dataclass(slots=True, kw_only=True)
class SearchOutcome:
    """Everything one search found, in walk order, and why it may be partial."""

    hits: list[FileHits]
    files_searched: int
    #: None when the walk itself was cut, so the number of files is not known.
    files_total: int | None
    timed_out: bool = False
    time_bound: float = 0.0
    #: Files whose content our own code read (search_code: those the rg prefilter kept); None if not tracked.
    files_read: int | None = None
    notes: list[str] = field(default_factory=list)

    def trailer(self) -> list[str]:
        """The notes, then the time-bound warning if the search was cut."""
        if not self.timed_out:
            return self.notes
        of = f" of {self.files_total:,}" if self.files_total is not None else ""
        return [
            f"(Search stopped at its {self.time_bound:g} s time bound after {self.files_searched:,}{of} "
            "files: results are partial. Narrow the path or file pattern.)",
            *self.notes,
        ]


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "es" if word.endswith("ch") else "s")


def format_outcome(outcome: SearchOutcome, max_results: int, context: int) -> tuple[str, ToolMetadata]:
    """The text for the model and the metadata for the notebook."""
    out: list[str] = []
    shown_count = 0
    files_left = 0
    for hit in outcome.hits:
        shown_here = 0
        previous = None
        lines = hit.lines if shown_count < max_results else []
        name = shown(hit.rel) if lines else ""
        for number, is_match, text in lines:
            if is_match and shown_count >= max_results:
                break
            if context and out and (previous is None or number != previous + 1):
                out.append("--")
            if hit.labels is not None:
                where = f"{name} [{hit.labels.get(number, number)}]"
                line = shown_line(text)
                out.append(f"{where}: {line}" if is_match else f"{where}- {line}")
            else:
                line = shown_line(text)
                out.append(f"{name}:{number}: {line}" if is_match else f"{name}-{number}- {line}")
            shown_count += is_match
            shown_here += is_match
            previous = number
        files_left += shown_here < hit.count
    total = sum(hit.count for hit in outcome.hits)
    left = total - shown_count
    if left > 0:
        out.append(
            f"... {plural(left, 'more match')} in {plural(files_left, 'file')}; narrow the pattern or path."
        )
    out.extend(outcome.trailer())
    metadata: ToolMetadata = {
        "matches": total,
        "files_with_matches": len(outcome.hits),
        "shown": shown_count,
        "truncated": left > 0,
        "timed_out": outcome.timed_out,
        "files_searched": outcome.files_searched,
    }
    if outcome.files_read is not None:
        metadata["files_read"] = outcome.files_read
    return "\n".join(out), metadata
