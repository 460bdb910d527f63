"""What two runs of the same code may print differently without meaning anything, taken out before texts are
compared (docs/notebook-check.md lists the rules):

- memory addresses (`<Foo object at 0x7f3a...>`, any `0x` and 6+ hex digits) become `0x…`;
- `%%time` and `%time` lines (`CPU times: ...`, `Wall time: ...`) are dropped;
- progress bars (tqdm's `42%|████  | 42/100 [00:01<00:02, 30.1it/s]`) are dropped, and a carriage return
  keeps only what was written after it on the line, as a terminal shows it;
- trailing spaces at line ends are dropped.

Warnings (`file.py:12: FutureWarning: ...` and the source line after it) are taken out of stderr and reported
apart, never as a change of output.
"""

from __future__ import annotations

import re

__all__ = ["normalise_text", "split_warnings"]

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_TIMING = re.compile(r"^(CPU times: .*|Wall time: .*)$")
_PROGRESS = re.compile(
    r"^.*\d+%\|.*\|.*(?:it/s|s/it|\?it/s|B/s)\]?\s*$|^.*\|\s*\d+/\d+\s*\[[0-9:<?,. ]+.*\]\s*$"
)
_WARNING = re.compile(r"^\S.*:\d+: (?:\w+Warning|Warning): .*$")


def normalise_text(text: str) -> str:
    lines = []
    for written in text.split("\n"):
        line = written.rstrip("\r").rsplit("\r", 1)[-1]
        if _PROGRESS.match(line) or _TIMING.match(line):
            continue
        lines.append(line.rstrip())
    return _ADDRESS.sub("0x…", "\n".join(lines)).strip("\n")


def split_warnings(stderr: str) -> tuple[str, list[str]]:
    """(stderr without its warnings, the warnings: `category: message` each)."""
    kept: list[str] = []
    warnings: list[str] = []
    lines = stderr.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if _WARNING.match(line):
            said = re.sub(r"^.*?:\d+: ", "", line)
            warnings.append(said.strip())
            i += 1
            if i < len(lines) and lines[i].startswith((" ", "\t")):  # the source line warnings print
                i += 1
            continue
        kept.append(line)
        i += 1
    return "\n".join(kept), warnings
