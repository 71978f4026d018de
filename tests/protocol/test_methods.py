"""The method table agrees with the schemas: its stable rows with meta.json and the stable
schema's x-method / x-side annotations, its unstable rows with the unstable schema's, and the
rest are extensions (an `_` name). A row's params type is the schema's, or a subclass of it
widened by the newer surface (acp_protocol/newer.py)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from acp_protocol.methods import METHODS, MethodSpec
from tests.support.acp_schema import DATA, META, methods_from_schema, schema_errors
from tests.support.protocol_examples import EXAMPLES

META_METHODS = sorted(
    name
    for group in ("agentMethods", "clientMethods", "protocolMethods")
    for name in META[group].values()
)
SCHEMA_METHODS = methods_from_schema()
STABLE = {name: spec for name, spec in METHODS.items() if spec.origin == "stable"}
UNSTABLE_SCHEMA: dict[str, Any] = json.loads((DATA / "schema.unstable.json").read_text())
UNSTABLE_META: dict[str, Any] = json.loads((DATA / "meta.unstable.json").read_text())


def schema_type(spec: MethodSpec[Any], name: str) -> type:
    """The class of the row's params type (or one it widens) that the schema calls `name`."""
    found = [cls for cls in spec.params.__mro__ if cls.__name__ == name]
    assert found, f"{spec.name}: {spec.params.__name__} is not (a subclass of) {name}"
    return found[0]


def test_table_covers_exactly_the_stable_methods() -> None:
    assert sorted(STABLE) == META_METHODS
    assert sorted(SCHEMA_METHODS) == META_METHODS
    assert all(spec.name == name for name, spec in METHODS.items())


@pytest.mark.parametrize("name", META_METHODS)
def test_types_match_schema_defs(name: str) -> None:
    spec = METHODS[name]
    expected = SCHEMA_METHODS[name]
    schema_type(spec, expected["params"])
    assert (spec.result.__name__ if spec.result else None) == expected["result"]
    assert spec.is_notification == (expected["result"] is None)
    assert {spec.direction} == expected["side"]


@pytest.mark.parametrize("name", META_METHODS)
def test_directions_follow_meta_groups(name: str) -> None:
    group = {"agent": "agentMethods", "client": "clientMethods", "protocol": "protocolMethods"}
    assert name in META[group[METHODS[name].direction]].values()


def test_the_other_rows_are_the_unstable_schemas_or_extensions() -> None:
    unstable_methods = {
        name
        for group in ("agentMethods", "clientMethods", "protocolMethods")
        for name in UNSTABLE_META[group].values()
    }
    defs = UNSTABLE_SCHEMA["$defs"]
    others = {name: spec for name, spec in METHODS.items() if spec.origin != "stable"}
    assert {spec.origin for spec in others.values()} == {"unstable", "extension"}
    for name, spec in others.items():
        if spec.origin == "extension":
            assert name.startswith("_") and name not in unstable_methods, name
            continue
        assert name in unstable_methods and name not in META_METHODS, name
        params = schema_type(spec, spec.params.__name__)
        assert defs[params.__name__]["x-method"] == name
        assert spec.result is not None and defs[spec.result.__name__]["x-method"] == name


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
    params = schema_type(spec, SCHEMA_METHODS[name]["params"])
    assert _decode_examples(params) > 0
    if params is not spec.params:  # the widened type reads the schema's examples too
        for example in (e for e in EXAMPLES if type(e) is params):
            decoded = msgspec.json.decode(msgspec.json.encode(example), type=spec.params)
            assert msgspec.json.encode(decoded) == msgspec.json.encode(example)
    if spec.result is not None:
        assert _decode_examples(spec.result) > 0


def test_empty_params_decode_for_parameterless_methods() -> None:
    for name in ("logout", "session/list"):
        assert msgspec.json.decode(b"{}", type=METHODS[name].params) is not None
    for name in ("authenticate", "logout", "session/set_mode", "fs/write_text_file"):
        result = METHODS[name].result
        assert result is not None
        assert msgspec.json.decode(b"{}", type=result) is not None
