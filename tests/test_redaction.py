"""`redact`: what it hides (remembered keys, bearer and basic credentials, `sk-` keys, key
headers, URL userinfo, secret query parameters) and what it leaves alone; the redacting log
formatter."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator

import pytest

from acp_server import redaction
from acp_server.redaction import REDACTED, RedactingFormatter, redact, redact_value


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    known = list(redaction._known)
    yield
    redaction._known[:] = known


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.DEF-123_~+/=", f"Authorization: Bearer {REDACTED}"),
        ("authorization: basic dXNlcjpwdw==", f"authorization: basic {REDACTED}"),
        ("sent 'Bearer abcdefgh12' twice", f"sent 'Bearer {REDACTED}' twice"),
        ("Authorization=tok_12", f"Authorization={REDACTED}"),
        ("key sk-proj-AbC123_xyz-789 rejected", f"key sk-{REDACTED} rejected"),
        ("x-api-key: sk-ant-api03-ZZZZZZZZ", f"x-api-key: {REDACTED}"),
        ("at https://alice:pw@host:8/v1 now", f"at https://{REDACTED}@host:8/v1 now"),
        ("at http://token@host/v1", f"at http://{REDACTED}@host/v1"),
        # An `@` inside the password: everything up to the host's `@` is hidden.
        ("at https://alice:p@ss@host/v1 now", f"at https://{REDACTED}@host/v1 now"),
        ("'https://u:a@b@c@host'", f"'https://{REDACTED}@host'"),
        # Key headers whatever their shape, as headers or assignments.
        ("x-api-key: plainvalue123", f"x-api-key: {REDACTED}"),
        ("X-Api-Key=plainvalue123, next", f"X-Api-Key={REDACTED}, next"),
        ("{'api-key': 'azure0123456'}", f"{{'api-key': '{REDACTED}'}}"),
        # Keys in a URL's query, whichever parameter carries them.
        ("GET http://h/sse?token=abc123&x=1", f"GET http://h/sse?token={REDACTED}&x=1"),
        ("http://h/mcp?api_key=abc123", f"http://h/mcp?api_key={REDACTED}"),
        ("http://h/m?a=1&key=abc123#top", f"http://h/m?a=1&key={REDACTED}#top"),
        (
            "http://h/m?access_token=a.b.c&sig=zz",
            f"http://h/m?access_token={REDACTED}&sig={REDACTED}",
        ),
        ("http://h/m?apiKey=abc&Password=pw", f"http://h/m?apiKey={REDACTED}&Password={REDACTED}"),
    ],
)
def test_credential_shapes_are_hidden(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "plain words, a bearer of news, Bearer bonds, basic understanding, an sk- prefix",
        "mail alice@example.com or see https://example.com/a@b",
        "git@github.com:owner/repo.git",
        "https://example.com/search?q=token&page=2 and a key=value pair in prose",
        "http://h/a@b?x=1",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_remembered_values_are_hidden_wherever_they_appear() -> None:
    redaction.remember(["plain-secret-value", None, "", "short"])
    assert redact("echo: plain-secret-value!") == f"echo: {REDACTED}!"
    assert redact("short words stay") == "short words stay"  # too short to hide literally


def test_a_value_containing_another_is_hidden_whole() -> None:
    redaction.remember(["abcdef", "xxabcdefxx"])
    assert redact("xxabcdefxx abcdef") == f"{REDACTED} {REDACTED}"


def test_error_data_is_redacted_throughout() -> None:
    data = {"detail": ["Bearer t0ken-t0ken", {"url": "https://u:p@h"}], "code": 7}
    assert redact_value(data) == {
        "detail": [f"Bearer {REDACTED}", {"url": f"https://{REDACTED}@h"}],
        "code": 7,
    }


def test_the_formatter_redacts_arguments_and_tracebacks() -> None:
    redaction.remember(["the-literal-key"])
    formatter = RedactingFormatter("%(message)s")
    try:
        raise ValueError("failed with the-literal-key")
    except ValueError:
        record = logging.LogRecord(
            "x", logging.ERROR, __file__, 1, "url %s", ("https://a:b@h",), sys.exc_info()
        )
    text = formatter.format(record)
    assert "the-literal-key" not in text and "a:b@" not in text
    assert f"url https://{REDACTED}@h" in text
    assert f"failed with {REDACTED}" in text


def test_hostile_text_is_redacted_in_linear_time() -> None:
    # Issue 24, hole 9: `redact` runs on the event loop's thread (error frames, an MCP server's
    # error text). The URL pattern restarted its scheme at every `.` or `-` of a long run, which
    # was quadratic: 20 KB of `a-a-...` took 8 s, so 1 MB froze the agent for hours. Run in a
    # child so the old code fails at the guard (100 times what the linear pattern needs).
    code = "from acp_server.redaction import redact; redact('a-' * 500_000); print('done')"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout == "done\n"
