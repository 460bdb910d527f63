"""The redactor finds a secret raw, in the common encodings, broken across a line end, and as a key shape."""

from __future__ import annotations

import html
import json
import shlex
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from architect_nb.redaction import Redactor

KEY = "Zq8vK2mN5pR7sT9uW1xY3aB6cD4eF0gH"  # 32 characters, like a provider key
PASSWORD = "p@ss\"wo\\rd's y&z<tag>"  # quotes, a backslash, spaces and HTML specials
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7f3x\nq9Yb2Lk0PzA1\n-----END RSA PRIVATE KEY-----\n"


@pytest.fixture
def redactor() -> Redactor:
    return Redactor(
        {"SERVICE_API_KEY": KEY, "DB_PASSWORD": PASSWORD, "DEPLOY_PRIVATE_KEY": PEM, "HOME": "/root"}
    )


@pytest.mark.parametrize(
    ("label", "encode"),
    [
        ("raw", lambda v: v),
        ("JSON", json.dumps),
        ("JSON, ASCII only", lambda v: json.dumps(v, ensure_ascii=True)),
        ("Python repr", repr),
        ("shell quoting", shlex.quote),
        ("URL encoding", lambda v: quote(v, safe="")),
        ("URL encoding, form", quote_plus),
        ("HTML escaping", html.escape),
        ("CRLF line ends", lambda v: v.replace("\n", "\r\n")),
    ],
)
@pytest.mark.parametrize("name", ["SERVICE_API_KEY", "DB_PASSWORD", "DEPLOY_PRIVATE_KEY"])
def test_a_secret_in_a_common_encoding_is_redacted(
    redactor: Redactor, label: str, encode: object, name: str
) -> None:
    value = {"SERVICE_API_KEY": KEY, "DB_PASSWORD": PASSWORD, "DEPLOY_PRIVATE_KEY": PEM}[name]
    encoded = encode(value)  # type: ignore[operator]
    out = redactor.redact(f"before {encoded} after")
    assert value not in out and encoded not in out, label
    assert f"[REDACTED:{name}]" in out or "[REDACTED]" in out
    assert out.startswith("before ") and out.endswith(" after")


@pytest.mark.parametrize("cut", [1, 5, 11, 12, 13, 20, 31])
def test_a_value_broken_at_a_line_end_is_redacted(redactor: Redactor, cut: int) -> None:
    for joint in ("\n", "\r\n", "\\\n", "\\n", "\\r\\n"):  # raw, and escaped as JSON or a repr shows them
        out = redactor.redact(f"token: {KEY[:cut]}{joint}{KEY[cut:]} rest")
        assert out == "token: [REDACTED:SERVICE_API_KEY] rest", (cut, joint, out)


def test_key_shapes_names_and_data(redactor: Redactor) -> None:
    shapes = "sk-proj-abcdefghijklmnopqrst ghp_" + "a" * 36 + " AKIA" + "B" * 16 + " hf_" + "c" * 34
    assert redactor.redact(shapes) == "[REDACTED] [REDACTED] [REDACTED] [REDACTED]"
    assert redactor.redact("task-runner sk-short") == "task-runner sk-short"  # not key-shaped
    assert redactor.redact(PEM[:40]) == "[REDACTED]"  # a private key cut short is still a private key
    data = {KEY: [f"x{KEY}", ("y", PASSWORD)], "n": 3, "home": "/root"}
    assert redactor.redact_data(data) == {
        "[REDACTED:SERVICE_API_KEY]": ["x[REDACTED:SERVICE_API_KEY]", ("y", "[REDACTED:DB_PASSWORD]")],
        "n": 3,
        "home": "/root",  # HOME is not a secret's name
    }


def test_secrets_from_sensitive_files_are_added_and_kept_across_refreshes() -> None:
    redactor = Redactor({})
    redactor.add({".env:STRIPE": "rk_live_0123456789abcdef"})
    redactor.refresh({"OTHER_TOKEN": "tok-0123456789"})
    assert redactor.redact("a rk_live_0123456789abcdef b tok-0123456789") == (
        "a [REDACTED:.env:STRIPE] b [REDACTED:OTHER_TOKEN]"
    )
    assert redactor.holdback >= len("rk_live_0123456789abcdef")


def test_a_secret_inside_another_is_redacted_whole() -> None:
    redactor = Redactor({"A_TOKEN": "abcdefgh", "B_TOKEN": "xxabcdefghyy"})
    assert redactor.redact("1 xxabcdefghyy 2 abcdefgh") == "1 [REDACTED:B_TOKEN] 2 [REDACTED:A_TOKEN]"


@settings(max_examples=150, deadline=None)
@given(
    prefix=st.text(max_size=50),
    suffix=st.text(max_size=50),
    cut=st.integers(min_value=0, max_value=len(KEY)),
    joint=st.sampled_from(["", "\n", "\r\n", "\\\n"]),
)
def test_no_raw_or_split_key_survives(prefix: str, suffix: str, cut: int, joint: str) -> None:
    redactor = Redactor({"SERVICE_API_KEY": KEY})
    out = redactor.redact(prefix + KEY[:cut] + joint + KEY[cut:] + suffix)
    assert KEY not in out.replace("\r", "").replace("\n", "").replace(" ", "")


_SECRETS = {
    "SERVICE_API_KEY": KEY,
    "DB_PASSWORD": PASSWORD,
    "DEPLOY_PRIVATE_KEY": PEM,
    "B_TOKEN": "AKIAsk-ghp_x9",  # made of key-shape prefixes
}


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(
        st.one_of(
            st.text(max_size=30),
            st.sampled_from([*_SECRETS.values(), "AKI", "sk", "-----BEGI", KEY[-5:], KEY[:5]]),
            st.sampled_from(list(_SECRETS.values())).map(json.dumps),
            st.sampled_from(list(_SECRETS.values())).map(html.escape),
            st.builds(lambda c: KEY[:c] + "\r\n" + KEY[c:], st.integers(0, len(KEY))),
        ),
        max_size=12,
    ),
    filler=st.integers(min_value=0, max_value=3000),
)
def test_the_prefilter_finds_what_a_whole_search_finds(pieces: list[str], filler: int) -> None:
    """Searching only around anchors gives the same text as searching everything, with secrets packed
    against each other and against pieces of anchors (which overlapping matches could hide)."""
    text = ("x" * filler).join(pieces) if filler % 2 else "".join(pieces) + "y" * filler
    fast, whole = Redactor(_SECRETS), Redactor(_SECRETS, prefilter=False)
    assert fast.redact(text) == whole.redact(text)


def test_a_text_with_no_anchor_is_returned_as_it_is() -> None:
    text = "ordinary output line\n" * 10_000
    assert Redactor(_SECRETS).redact(text) is text


def test_nested_encodings_are_redacted(redactor: Redactor) -> None:
    """A password shell-quoted in a command, in a tool call's JSON arguments, in the environment a hook
    returns as JSON context (3 levels; a 4th, the hook's own JSON around that, is parsed before use)."""
    arguments = json.dumps({"command": f"echo {shlex.quote(PASSWORD)}"})
    context = json.dumps({"ARCHITECT_TOOL_INPUT": arguments})
    for text in (
        arguments,
        json.dumps(arguments),
        context,
        repr(json.dumps(PASSWORD)),
        html.escape(f"echo {shlex.quote(PASSWORD)}"),
    ):
        out = redactor.redact(text)
        assert "[REDACTED:DB_PASSWORD]" in out, text
        assert "wo\\" not in out and "p@ss" not in out, out


#: Any code point at all: lone surrogates (what bytes decoded with surrogateescape hold), NULs, controls.
_ANY_CHARACTER = st.one_of(
    st.characters(codec=None, exclude_categories=()),
    st.integers(0xD800, 0xDFFF).map(chr),
    st.sampled_from(["\x00", "\ufffd", "\udc93", "\U0010ffff"]),
)


@settings(max_examples=300, deadline=None)
@given(
    before=st.text(_ANY_CHARACTER, max_size=200),
    after=st.text(_ANY_CHARACTER, max_size=200),
    secret=st.sampled_from(list(_SECRETS.values())),
)
def test_redaction_takes_any_string_and_still_finds_the_secret(before: str, after: str, secret: str) -> None:
    """Any `str` is accepted (binary content decoded with surrogate escapes once ended every run that wrote a
    database), the secret between arbitrary text is still cut out, and the text around it is kept."""
    text = f"{before} {secret} {after}"
    for redactor in (Redactor(_SECRETS), Redactor(_SECRETS, prefilter=False)):
        out = redactor.redact(text)
        assert secret not in out
        assert out.startswith(before[: max(0, len(before) - 40)])  # nothing far from the secret is lost
    assert Redactor(_SECRETS).redact(before + after) == Redactor(_SECRETS, prefilter=False).redact(
        before + after
    )


def test_bytes_decoded_with_surrogate_escapes_are_redacted_in_place() -> None:
    raw = b"SQLite format 3\x00\x93\xff" + KEY.encode() + b"\x80\x81 tail"
    text = raw.decode("utf-8", "surrogateescape")
    out = Redactor({"SERVICE_API_KEY": KEY}).redact(text)
    assert KEY not in out and "[REDACTED:SERVICE_API_KEY]" in out
    assert out.startswith("SQLite format 3\x00\udc93\udcff") and out.endswith("\udc80\udc81 tail")
