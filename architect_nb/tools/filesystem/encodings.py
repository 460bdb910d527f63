"""The encoding of a text file without a BOM: a Python file's coding cookie, UTF-8, else a sure detection.

`fileio.decode_text` asks `choose_encoding` only after UTF-8 (or a BOM) failed, so UTF-8 files pay nothing.
The detection is charset-normalizer's; this module only decides when its answer is sure enough:

- the candidates with the lowest "chaos" (its mess score) that decode the bytes to the same text are one
  reading; one reading is sure;
- else a reading whose language "coherence" leads every other by `_COHERENCE_LEAD` is sure;
- else, if cp1252 is among the tied readings, cp1252 is taken: on short Western text the detector scores
  cp1250, cp1252 and cp1257 alike (cp1250 reads "crème" as "crčme"), and cp1252 is what Windows and
  spreadsheets write in Western Europe and the Americas;
- else the file is refused, naming the readings.

Within one reading cp1252 is preferred to Latin-1 and the rest: for bytes outside 0x80-0x9F they decode
alike, and cp1252 can store what a model is likely to insert (€, curly quotes, dashes) where Latin-1 has
only C1 control codes. Only encodings that give back the very same bytes (round trip) and keep no state
between characters are used, so an edit changes only the bytes of the text it replaces.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass

__all__ = ["EncodingError", "choose_encoding", "cookie_encoding", "shown_encoding", "unencodable"]

#: Chaos scores this close to the lowest count as a tie (the scores are fractions of 1).
_CHAOS_TIE = 0.01
#: How far one reading's coherence must lead the others' for the detector to count as sure.
_COHERENCE_LEAD = 0.1
_PREFERRED = ("cp1252", "iso8859-1")
_MAX_NAMED = 4
_PYTHON_SUFFIXES = (".py", ".pyw", ".pyi")


class EncodingError(ValueError):
    """The bytes' encoding cannot be decided, or text cannot be stored in it. The message is for the model."""


@dataclass(frozen=True, slots=True)
class _Reading:
    text: str
    encodings: tuple[str, ...]
    coherence: float


def shown_encoding(encoding: str) -> str:
    """The name the model is told: 'cp1252', 'latin-1', 'utf-16-le'."""
    return {"iso8859-1": "latin-1"}.get(encoding, encoding)


def _usable(encoding: str) -> bool:
    """Whether text in `encoding` can be edited in place: no state between characters, no BOM of its own."""
    name = codecs.lookup(encoding).name
    return not (name.startswith(("iso2022", "utf-16", "utf-32")) or name in ("utf-7", "hz", "utf-8-sig"))


def cookie_encoding(data: bytes, shown: str) -> str | None:
    """The encoding a Python file's PEP 263 coding cookie declares, as `tokenize.detect_encoding` reads it;
    None for other files, for a file without a cookie, and for a cookie that says UTF-8."""
    if not shown.endswith(_PYTHON_SUFFIXES):
        return None
    try:
        declared, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown encoding named, or a first line that is not UTF-8 and no cookie
        return None
    name = codecs.lookup(declared).name
    if name in ("utf-8", "utf-8-sig"):
        return None
    if not _usable(name):
        raise EncodingError(
            f"'{shown}' declares the encoding {declared!r}, which cannot be edited in place; "
            "convert it to UTF-8 with run_command (iconv) first."
        )
    return name


def choose_encoding(data: bytes, shown: str) -> str:
    """The encoding of `data`, which is not UTF-8 and has no BOM, when the detector is sure. Else raises
    `EncodingError`, naming the readings it hesitates between."""
    from charset_normalizer import from_bytes  # here: files that are UTF-8 never import it

    readings: dict[str, _Reading] = {}
    matches = [m for m in from_bytes(data) if any(map(_usable, m.could_be_from_charset))]
    least = min((m.chaos for m in matches), default=0.0)
    for match in matches:
        if match.chaos > least + _CHAOS_TIE:
            continue
        # Each name is decoded here: the detector's groups of "same output" names are not always exact.
        for name in dict.fromkeys(codecs.lookup(n).name for n in match.could_be_from_charset if _usable(n)):
            text = _round_trip(data, name)
            if text is None:
                continue
            old = readings.get(text, _Reading(text, (), match.coherence))
            if name not in old.encodings:
                coherence = max(old.coherence, match.coherence)
                readings[text] = _Reading(text, (*old.encodings, name), coherence)
    if not readings:
        raise EncodingError(
            f"'{shown}' is not UTF-8, and no other encoding fits it; it cannot be read or edited as text."
        )
    picked = _sure(list(readings.values()))
    if picked is None:
        raise EncodingError(_ambiguity(data, list(readings.values()), shown))
    return next((n for n in _PREFERRED if n in picked.encodings), picked.encodings[0])


def _sure(readings: list[_Reading]) -> _Reading | None:
    if len(readings) == 1:
        return readings[0]
    ranked = sorted(readings, key=lambda r: r.coherence, reverse=True)
    if ranked[0].coherence >= ranked[1].coherence + _COHERENCE_LEAD:
        return ranked[0]
    western = [r for r in readings if "cp1252" in r.encodings]
    return western[0] if western else None


def _round_trip(data: bytes, encoding: str) -> str | None:
    """`data` decoded in `encoding`, if that decodes it and encodes the text back to the same bytes."""
    try:
        text = data.decode(encoding)
        return text if text.encode(encoding) == data else None
    except (UnicodeError, LookupError):
        return None


def _ambiguity(data: bytes, readings: list[_Reading], shown: str) -> str:
    first = next((i for i, b in enumerate(data) if b >= 0x80), 0)
    start = data.rfind(b"\n", 0, first) + 1
    end = data.find(b"\n", first)
    piece = data[start : end if end >= 0 else len(data)][:60]
    named = [f"{r.encodings[0]} ({piece.decode(r.encodings[0], 'replace')!r})" for r in readings[:_MAX_NAMED]]
    more = f" and {len(readings) - _MAX_NAMED} more" if len(readings) > _MAX_NAMED else ""
    line = data.count(b"\n", 0, first) + 1
    return (
        f"'{shown}' is not UTF-8, and its encoding cannot be told for sure: line {line} reads as "
        f"{'; '.join(named)}{more}. It was not read. If you know the encoding, convert the file to UTF-8 "
        "with run_command (iconv -f ENCODING -t UTF-8), or ask the user."
    )


def unencodable(text: str, exc: UnicodeEncodeError, encoding: str, shown: str) -> str:
    """Why `text` cannot be written in `encoding`: which character, its code point and line."""
    ch = exc.object[exc.start : exc.start + 1]
    line = text.count("\n", 0, exc.start) + 1
    what = "an unpaired surrogate" if 0xD800 <= ord(ch) <= 0xDFFF else repr(ch)
    return (
        f"The new text has {what} (U+{ord(ch):04X}) on line {line}, which {shown_encoding(encoding)}, the "
        f"encoding of '{shown}', cannot store; '{shown}' is unchanged. Use other characters, or convert the "
        "file to UTF-8 first (run_command: iconv)."
    )
