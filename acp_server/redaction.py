"""Secrets out of text that leaves the process: one function, `redact`, at every exit.

The exits that carry text the agent did not write itself (a provider's error body, an
exception's message, a URL) are: error responses to the client (`rpc/error_exit.py`,
`error_frame`), provider errors (`models/base.py`, `ModelError`, which also reach tool
results of subagents), the full error text of a failed turn (`agent/loop.py`; the journal
keeps only a coarse outcome, `agent/failures.py`), and
every log line (`RedactingFormatter`, installed by the CLI on stderr).

What is hidden: the values of the provider key variables (`remember`, called once at
start-up with them), bearer and basic credentials, `sk-` style keys, key headers
(`x-api-key:`, `api-key:`), the userinfo of URLs (`https://user:p@ss@host`, up to the host's
`@`), and query parameters named for a secret (`?token=`, `&api_key=`, `key=`, `sig=`).

Process-wide on purpose: logging is, and a key known anywhere must be hidden at every exit.
Imports nothing of the project, so every layer may use it.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"

_MIN_LITERAL = 6
"""Shorter values are not hidden literally: they would blank out ordinary words."""

_SOURCES = (
    # A credential after `Authorization:` whatever its scheme; a bearer token anywhere.
    (
        r"(?i)\b(authorization\s*[:=]\s*(?:[a-z]+\s+)?)[^\s\"',;]+",
        rf"\1{REDACTED}",
    ),
    (r"\b(Bearer\s+)[A-Za-z0-9\-._~+/]{8,}=*", rf"\1{REDACTED}"),
    (r"\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{5,}", f"sk-{REDACTED}"),
    # A key header or assignment (`x-api-key: ...`, `api_key=...`, `"api-key": "..."`).
    (
        r"(?i)\b((?:x-)?api[-_]?key[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&#<>]+",
        rf"\1{REDACTED}",
    ),
    # The userinfo of a URL, up to the host's `@` (a password may hold `@` itself). The scheme
    # starts where a run of scheme characters starts and is taken whole (`*+`): a `\b` start
    # retried at every `.` or `-` of a long run made this quadratic (20 KB of `a-a-`: 8 s).
    (
        r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]*+://)[^/?#\s\"'\\<>]+@",
        rf"\1{REDACTED}@",
    ),
    # A query parameter whose name says it carries a secret (`?token=`, `&api_key=`, `sig=`).
    (
        r"(?i)([?&;][a-z0-9_.\-]*(?:token|key|secret|password|passwd|pwd|sig|signature"
        r"|auth|credentials?)=)[^&#\s\"'<>]+",
        rf"\1{REDACTED}",
    ),
)


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """The patterns, compiled at the first redaction rather than at import: compiling them
    takes a few milliseconds, which every start-up paid before `session/new` was answered
    (the ready-before-the-runtime RFC) though a quiet start-up redacts nothing."""
    return tuple((re.compile(pattern), replacement) for pattern, replacement in _SOURCES)


_known: list[str] = []


def remember(values: Iterable[str | None]) -> None:
    """Hide these literal values (provider keys) from now on, wherever they appear."""
    for value in values:
        if value and len(value) >= _MIN_LITERAL and value not in _known:
            _known.append(value)
    _known.sort(key=len, reverse=True)  # a key that contains another goes first


def redact(text: str) -> str:
    """`text` with every secret replaced by `[redacted]`."""
    for value in _known:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _patterns():
        text = pattern.sub(replacement, text)
    return text


def redact_value(value: Any) -> Any:
    """`redact` applied to every string in a JSON-like value (error `data`)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
    return value


class RedactingFormatter(logging.Formatter):
    """A log formatter whose output (message, arguments and traceback) is redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
