"""What a check found, and its report: "same", or the first differing cell with both sides and what
differs, then the other differences, then the unstable cells. Plain text for the model and the terminal;
HTML for the cell. Every text in it is redacted (secrets in outputs never reach a report)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

__all__ = ["CheckResult", "Difference"]

_SIDE_CHARS = 1500  # of each side shown per difference


@dataclass(frozen=True, slots=True, kw_only=True)
class Difference:
    """One cell (or `compare:` variable) whose output changed."""

    where: str  # "cell 3 (explore-3)" or "variable df"
    what: str  # one line: "column 'revenue': row 2: 10.5 became 11.0"
    before: str
    after: str


@dataclass(slots=True, kw_only=True)
class CheckResult:
    """`same` is True when no output changed in meaning (cells added or removed, unstable cells and
    warnings are listed but do not count) and both sides ran to the end."""

    notebook: str
    differences: list[Difference] = field(default_factory=list)
    unstable: list[Difference] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failure: str | None = None  # a side could not run to the end: the check proves nothing
    seconds: float = 0.0

    @property
    def same(self) -> bool:
        return self.failure is None and not self.differences

    def headline(self) -> str:
        if self.failure is not None:
            return f"{self.notebook}: the check could not finish: {self.failure}"
        if self.same:
            return f"{self.notebook}: same outputs before and after."
        n = len(self.differences)
        return f"{self.notebook}: {n} output(s) changed; the first is {self.differences[0].where}."

    def text(self) -> str:
        """The report as plain text (what the model and the terminal read)."""
        lines = [self.headline()]
        for i, d in enumerate(self.differences):
            lines.append(f"\n{'First difference' if i == 0 else 'Difference'}: {d.where}: {d.what}")
            lines += [f"  before: {_indent(d.before)}", f"  after:  {_indent(d.after)}"]
        lines += self._listed_text()
        return _redact("\n".join(lines))

    def brief(self, max_chars: int = 1900) -> str:
        """The report for the model, within `max_chars`: the first difference with both sides (cut), every
        other one as a line, then the rest. A gate's output is cut to its end, so this fits whole."""
        lines = [self.headline()]
        side = max(200, (max_chars - 600) // 4)
        for i, d in enumerate(self.differences):
            if i == 0:
                lines.append(f"First difference: {d.where}: {d.what}")
                lines += [f"  before: {_indent(d.before, side)}", f"  after:  {_indent(d.after, side)}"]
            else:
                lines.append(f"Difference: {d.where}: {d.what}")
        lines += [line.strip("\n") for line in self._listed_text()]
        text = _redact("\n".join(line for line in lines if line))
        return text if len(text) <= max_chars else text[: max_chars - 6] + " [...]"

    def _listed_text(self) -> list[str]:
        lines = []
        if self.unstable:
            lines.append("\nUnstable (they differ between runs of the same code, so they prove nothing):")
            lines += [f"  {d.where}: {d.what}" for d in self.unstable]
        for title, names in (("Cells added", self.added), ("Cells removed", self.removed)):
            if names:
                lines.append(f"\n{title}: {', '.join(names)}")
        if self.warnings:
            lines.append("\nWarnings (not compared):")
            lines += [f"  {w}" for w in self.warnings]
        lines += [f"\nNote: {n}" for n in self.notes]
        lines.append(f"\n({self.seconds:.1f}s)")
        return lines

    def __str__(self) -> str:
        return self.text()

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None, **kwargs: object
    ) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return self.text()

    def html(self) -> str:
        e = html.escape
        colour = "#1a7f37" if self.same else "#cf222e"
        parts = [
            f'<div style="border-left:4px solid {colour};padding:4px 8px">',
            f"<b>{e(_redact(self.headline()))}</b>",
        ]
        for i, d in enumerate(self.differences):
            title = "First difference" if i == 0 else "Difference"
            parts.append(
                f"<div style='margin-top:6px'><b>{title}: {e(_redact(d.where))}</b>: {e(_redact(d.what))}"
                '<table style="width:100%;table-layout:fixed"><tr><th style="text-align:left">before</th>'
                '<th style="text-align:left">after</th></tr><tr>'
                f"<td>{_pre(d.before)}</td><td>{_pre(d.after)}</td></tr></table></div>"
            )
        listed = "\n".join(self._listed_text()).strip()
        if listed:
            parts.append(f"<pre style='white-space:pre-wrap;margin-top:6px'>{e(_redact(listed))}</pre>")
        parts.append("</div>")
        return "".join(parts)


def _pre(text: str) -> str:
    return f"<pre style='white-space:pre-wrap'>{html.escape(_redact(_cut(text)))}</pre>"


def _cut(text: str, limit: int = _SIDE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + " […]"


def _indent(text: str, limit: int = _SIDE_CHARS) -> str:
    return _cut(text, limit).replace("\n", "\n          ")


def _redact(text: str) -> str:
    from architect_nb.redaction import default_redactor

    return default_redactor().redact(text)
