"""Validation of agent->client frames against the vendored official ACP JSON Schema.

Every frame of every end-to-end test passes here, tens of thousands a run, so the validators
are jsonschema-rs's (compiled once per schema reference): python-jsonschema took 5 to 50 ms a
`session/update` frame, walking the envelope's nested `anyOf` of every message kind, and that
was a large share of the test workers' CPU
(docs/rfc/implemented/testing/2026-12-06-suite-in-minutes.md).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema_rs import Draft202012Validator

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "data" / "acp" / "schema.json"


@cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


@cache
def _validator(ref: str) -> Draft202012Validator:
    schema = _schema()
    return Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{ref}"}
    )


@cache
def _agent_message_validator() -> Draft202012Validator:
    schema = _schema()
    return Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], **schema["anyOf"][0]}
    )


@cache
def _defs_by_method() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for name, definition in _schema()["$defs"].items():
        method = definition.get("x-method")
        if method is None:
            continue
        kind = "result" if name.endswith("Response") else "params"
        table.setdefault(method, {})[kind] = name
    return table


def schema_errors(ref: str, value: Any) -> list[str]:
    """Messages of every violation of `$defs/ref` by `value`."""
    return [
        f"{'/'.join(map(str, e.instance_path))}: {e.message}"
        for e in _validator(ref).iter_errors(value)
    ]


def validate_agent_frame(frame: dict[str, Any], request_method: str | None = None) -> None:
    """Assert `frame` (agent->client) is valid ACP: envelope, then params or result by method.

    `request_method` names the client request a response answers (needed to check a result).
    """
    envelope = [e.message for e in _agent_message_validator().iter_errors(frame)]
    assert not envelope, f"invalid agent frame {frame}: {envelope}"
    if "method" in frame:
        defs = _defs_by_method().get(frame["method"])
        assert defs is not None, f"agent sent unknown method {frame['method']}"
        problems = schema_errors(defs["params"], frame.get("params"))
        assert not problems, f"invalid {frame['method']} params {frame}: {problems}"
    elif "result" in frame and request_method is not None:
        defs = _defs_by_method().get(request_method)
        if defs is not None and "result" in defs:
            problems = schema_errors(defs["result"], frame["result"])
            assert not problems, f"invalid {request_method} result {frame}: {problems}"
    elif "error" in frame:
        problems = schema_errors("Error", frame["error"])
        assert not problems, f"invalid error {frame}: {problems}"
