"""The error codes (acp_protocol/errors.py) are the schema's `ErrorCode`s: every code the v1
schema names is here with the schema's title as its message, and the one v2 adds
(`UNSUPPORTED_PROTOCOL_VERSION`) is the v2 schema's. Which error each refusal gets, on the wire:
tests/rpc/test_reference_answers.py and tests/e2e/test_one_dispatch_path.py."""

from __future__ import annotations

import json
from pathlib import Path

from acp_protocol import errors
from tests.support.acp_schema import DEFS

V2_SCHEMA = Path(__file__).resolve().parents[1] / "data" / "acp" / "v2" / "schema.json"


def named_codes(defs: dict[str, object]) -> dict[int, str]:
    """The codes an `ErrorCode` def names, with their titles (its catch-all has no const)."""
    error_code = defs["ErrorCode"]
    assert isinstance(error_code, dict)
    return {c["const"]: c["title"] for c in error_code["anyOf"] if "const" in c}


def test_every_code_of_the_v1_schema_is_here_with_its_title() -> None:
    v1 = named_codes(DEFS)
    assert {code: errors.DEFAULT_MESSAGES[code] for code in v1} == v1


def test_every_code_here_is_a_code_of_the_v2_schema_with_its_title() -> None:
    v2 = named_codes(json.loads(V2_SCHEMA.read_text())["$defs"])
    assert v2 == errors.DEFAULT_MESSAGES
    assert v2[errors.UNSUPPORTED_PROTOCOL_VERSION] == "Unsupported protocol version"


def test_each_exported_code_has_its_message() -> None:
    codes = {getattr(errors, name) for name in errors.__all__ if name != "DEFAULT_MESSAGES"}
    assert codes == set(errors.DEFAULT_MESSAGES)
