"""The downloaders: the files `curl` and `wget` write, and why their output piped into an interpreter is
blocked (it runs code nobody has read)."""

from __future__ import annotations

from architect_nb.tools.commands.programs import writes
from architect_nb.tools.commands.programs.model import ProgramModel, Spec, frozen

__all__ = ["MODELS"]


_CURL_LONG = frozen(
    "--output", "--output-dir", "--dump-header", "--cookie-jar", "--cookie", "--trace", "--trace-ascii",
    "--stderr", "--data", "--data-raw", "--data-binary", "--header", "--user", "--user-agent", "--request",
    "--referer", "--form", "--config", "--max-time", "--upload-file", "--write-out", "--proxy", "--range",
)  # fmt: skip

MODELS: list[ProgramModel] = [
    ProgramModel(
        name="curl", options=Spec("AbcCdDeEFHKmoPQrTuUwxXyYz", _CURL_LONG), writes=writes.curl, downloads=True
    ),
    ProgramModel(
        name="wget",
        options=Spec(
            "OPoaeUtTwQiBDlAR", frozen("--output-document", "--directory-prefix", "--output-file", "--tries")
        ),
        writes=writes.wget,
        downloads=True,
    ),
    # Other downloaders: what they write is the sandbox's and the confirmation's job; what they fetch, piped
    # into an interpreter, is blocked.
    *(ProgramModel(name=n, downloads=True) for n in ("http", "https", "xh", "aria2c", "fetch")),
]
