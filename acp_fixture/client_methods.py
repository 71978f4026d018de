"""The fixture runner's answers to the agent's requests, dispatched by jsonrpcserver.

The runner plays the client, so the requests it serves are the agent's: a permission (answered
by the fixture's policy) and `fs/*` (served from the local disk); every other method (terminals)
is jsonrpcserver's "Method not found". jsonrpcserver does the dispatch itself: its registry finds
the method, binds the request's params by name (a param the method does not take, or a missing
one, is its "Invalid params"), and builds the response frame, including for a method that raises.
The agent's own request path does not use it: see
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .format import JsonObject, Policy

with warnings.catch_warnings():
    # jsonrpcserver 5.0.9 calls importlib.resources.read_text at import, deprecated on
    # Python 3.11 and 3.12 only; the runner's stderr is for the agent's own lines.
    warnings.filterwarnings("ignore", r"(read_text|open_text) is deprecated", DeprecationWarning)
    from jsonrpcserver import Error, InvalidParams, Result, Success, dispatch_to_serializable


@dataclass
class Answering:
    """What an answer depends on: the permission policy in force when the request came."""

    policy: Policy


def answer(request: JsonObject, policy: Policy) -> JsonObject:
    """The response frame to one request of the agent."""
    reply = dispatch_to_serializable(
        json.dumps(request), methods=METHODS, context=Answering(policy)
    )
    assert isinstance(reply, dict)  # one request (not a batch, not a notification)
    # The envelope first, as the transcripts have always shown it.
    return {"jsonrpc": reply.pop("jsonrpc"), "id": reply.pop("id"), **reply}


def answered_by(method: str, policy: Policy) -> str:
    """How the transcript names who answered (the policy for a permission)."""
    if method == "session/request_permission":
        return f"permissions {policy}"
    return "fs" if method in ("fs/read_text_file", "fs/write_text_file") else "runner"


def request_permission(context: Answering, options: Any = None, **_: Any) -> Result:
    """Select the first option of the policy's kind, or answer `cancelled`."""
    if context.policy != "cancelled" and isinstance(options, list):
        for option in options:
            if isinstance(option, dict) and option.get("kind") == context.policy:
                return Success({"outcome": {"outcome": "selected", "optionId": option["optionId"]}})
    return Success({"outcome": {"outcome": "cancelled"}})


def read_text_file(
    context: Answering, path: Any, line: Any = None, limit: Any = None, **_: Any
) -> Result:
    """The file's text, or its lines from `line` (1-based), at most `limit` of them."""
    file = _absolute(path)
    if file is None:
        return InvalidParams("path must be an absolute path")
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Error(-32002, "Resource not found", f"no file {file}")
    except (OSError, UnicodeDecodeError) as exc:
        return Error(-32603, "Internal error", f"cannot read {file}: {exc}")
    if line is None and limit is None:
        return Success({"content": text})
    lines = text.splitlines(keepends=True)
    start = max(line - 1, 0) if isinstance(line, int) else 0
    end = start + limit if isinstance(limit, int) else None
    return Success({"content": "".join(lines[start:end])})


def write_text_file(context: Answering, path: Any, content: Any, **_: Any) -> Result:
    """Write `content` to the file."""
    file = _absolute(path)
    if file is None:
        return InvalidParams("path must be an absolute path")
    if not isinstance(content, str):
        return InvalidParams("content must be a string")
    try:
        file.write_text(content, encoding="utf-8")
    except OSError as exc:
        return Error(-32603, "Internal error", f"cannot write {file}: {exc}")
    return Success({})


def _absolute(path: Any) -> Path | None:
    return Path(path) if isinstance(path, str) and os.path.isabs(path) else None


METHODS = {
    "session/request_permission": request_permission,
    "fs/read_text_file": read_text_file,
    "fs/write_text_file": write_text_file,
}
