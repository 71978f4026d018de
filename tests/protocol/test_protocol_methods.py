"""The method table agrees with meta.json and with the schema's x-method / x-side annotations."""

from __future__ import annotations

import msgspec
import pytest

from acp_protocol.methods import METHODS
from tests.support.acp_schema import META, methods_from_schema, schema_errors
from tests.support.protocol_examples import EXAMPLES

META_METHODS = sorted(
    name
    for group in ("agentMethods", "clientMethods", "protocolMethods")
    for name in META[group].values()
)
SCHEMA_METHODS = methods_from_schema()


def test_table_covers_exactly_the_stable_methods() -> None:
    assert sorted(METHODS) == META_METHODS
    assert sorted(SCHEMA_METHODS) == META_METHODS
    assert all(spec.name == name for name, spec in METHODS.items())


@pytest.mark.parametrize("name", META_METHODS)
def test_types_match_schema_defs(name: str) -> None:
    spec = METHODS[name]
    expected = SCHEMA_METHODS[name]
    assert spec.params.__name__ == expected["params"]
    assert (spec.result.__name__ if spec.result else None) == expected["result"]
    assert spec.is_notification == (expected["result"] is None)
    assert {spec.direction} == expected["side"]


@pytest.mark.parametrize("name", META_METHODS)
def test_directions_follow_meta_groups(name: str) -> None:
    group = {"agent": "agentMethods", "client": "clientMethods", "protocol": "protocolMethods"}
    assert name in META[group[METHODS[name].direction]].values()


def _decode_examples(cls: type) -> int:
    examples = [e for e in EXAMPLES if type(e) is cls]
    for example in examples:
        raw = msgspec.json.encode(example)
        assert schema_errors(msgspec.json.decode(raw), cls.__name__) == []
        assert msgspec.json.decode(raw, type=cls) == example
    return len(examples)


@pytest.mark.parametrize("name", META_METHODS)
def test_example_params_and_results_decode(name: str) -> None:
    spec = METHODS[name]
    assert _decode_examples(spec.params) > 0
    if spec.result is not None:
        assert _decode_examples(spec.result) > 0


def test_empty_params_decode_for_parameterless_methods() -> None:
    for name in ("logout", "session/list"):
        assert msgspec.json.decode(b"{}", type=METHODS[name].params) is not None
    for name in ("authenticate", "logout", "session/set_mode", "fs/write_text_file"):
        result = METHODS[name].result
        assert result is not None
        assert msgspec.json.decode(b"{}", type=result) is not None
