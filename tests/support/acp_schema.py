"""Helpers over the vendored official ACP schema (tests/data/acp/schema.json)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

DATA = Path(__file__).resolve().parents[1] / "data" / "acp"
GOLDEN = DATA / "golden"
SCHEMA: dict[str, Any] = json.loads((DATA / "schema.json").read_text())
DEFS: dict[str, Any] = SCHEMA["$defs"]
META: dict[str, Any] = json.loads((DATA / "meta.json").read_text())


@cache
def validator(*names: str) -> Draft202012Validator:
    """A validator for `$defs/<name>`; several names mean "any of them"."""
    if len(names) == 1:
        target: dict[str, Any] = {"$ref": f"#/$defs/{names[0]}"}
    else:
        target = {"anyOf": [{"$ref": f"#/$defs/{name}"} for name in names]}
    return Draft202012Validator({"$schema": SCHEMA["$schema"], "$defs": DEFS, **target})


def schema_errors(value: Any, *names: str) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(*names).iter_errors(value)
    ]


def is_concrete_object(definition: dict[str, Any]) -> bool:
    return definition.get("type") == "object"


def methods_from_schema() -> dict[str, dict[str, Any]]:
    """x-method -> {"params": def name, "result": def name | None, "side": x-side}."""
    out: dict[str, dict[str, Any]] = {}
    for name, definition in DEFS.items():
        method = definition.get("x-method")
        if method is None:
            continue
        entry = out.setdefault(method, {"params": None, "result": None, "side": set()})
        entry["result" if name.endswith("Response") else "params"] = name
        entry["side"].add(definition["x-side"])
    return out


def _expand(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema and every subschema it is combined with ($ref, allOf, anyOf, oneOf).

    Branches of a union are all included, so properties are the union over the branches.
    """
    out: list[dict[str, Any]] = []
    stack = [schema]
    while stack:
        current = stack.pop()
        if "$ref" in current:
            stack.append(DEFS[current["$ref"].rsplit("/", 1)[1]])
        out.append(current)
        for key in ("allOf", "anyOf", "oneOf"):
            stack.extend(current.get(key, []))
    return out


def all_properties(schema: dict[str, Any]) -> set[str]:
    """Names of the properties declared by the schema or any schema combined with it."""
    return {key for c in _expand(schema) for key in c.get("properties", {})}


def _property_schemas(candidates: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [c["properties"][key] for c in candidates if key in c.get("properties", {})]


def _additional(candidates: list[dict[str, Any]]) -> tuple[bool, list[dict[str, Any]]]:
    """(open to any key, schemas of additional values)."""
    extra = [c["additionalProperties"] for c in candidates if "additionalProperties" in c]
    return any(e is True for e in extra), [e for e in extra if isinstance(e, dict)]


def unknown_keys(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Paths of object members the schema does not declare (the schema itself allows them,
    since it never sets `additionalProperties: false`; a misnamed field would slip through)."""
    candidates = _expand(schema)
    found: list[str] = []
    if isinstance(value, dict):
        open_any, extra = _additional(candidates)
        declared = any("properties" in c for c in candidates)
        for key, item in value.items():
            subs = _property_schemas(candidates, key) or extra
            if subs:
                found += unknown_keys(item, {"allOf": subs}, f"{path}.{key}")
            elif declared and not open_any:
                found.append(f"{path}.{key}")
    elif isinstance(value, list):
        items = [c["items"] for c in candidates if isinstance(c.get("items"), dict)]
        if items:
            for index, item in enumerate(value):
                found += unknown_keys(item, {"allOf": items}, f"{path}[{index}]")
    return found


def strip_defaults(value: Any, schema: dict[str, Any]) -> Any:
    """Drop object members equal to the default the schema declares for them.

    Defaults are compared after being normalized the same way, so `"mcpCapabilities": {}`
    and the declared default `{"http": false, "sse": false}` both normalize to nothing.
    Only members with a declared `default` are ever dropped.
    """
    candidates = _expand(schema)
    if isinstance(value, dict):
        _, extra = _additional(candidates)
        out = {}
        for key, item in value.items():
            subs = _property_schemas(candidates, key) or extra
            normalized = strip_defaults(item, {"allOf": subs}) if subs else item
            defaults = [strip_defaults(sub["default"], sub) for sub in subs if "default" in sub]
            if any(normalized == default for default in defaults):
                continue
            out[key] = normalized
        return out
    if isinstance(value, list):
        items = [c["items"] for c in candidates if isinstance(c.get("items"), dict)]
        return [strip_defaults(item, {"allOf": items}) for item in value] if items else value
    return value


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}
