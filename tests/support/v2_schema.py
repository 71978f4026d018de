"""Helpers over the vendored ACP v2 schemas (tests/data/acp/v2/): validators by def name, the
method map, and the member checks of `acp_schema` run against the v2 definitions."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

DATA = Path(__file__).resolve().parents[1] / "data" / "acp" / "v2"


@dataclass(frozen=True)
class V2Schema:
    """One of the two v2 schema files."""

    name: str
    raw: dict[str, Any] = field(hash=False, compare=False)

    @property
    def defs(self) -> dict[str, Any]:
        return self.raw["$defs"]  # type: ignore[no-any-return]

    def validator(self, *names: str) -> Draft202012Validator:
        return _validator(self, names)

    def errors(self, value: Any, *names: str) -> list[str]:
        """Violations of `$defs/name` (several names: any of them)."""
        return [
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in self.validator(*names).iter_errors(value)
        ]

    def methods(self) -> dict[str, dict[str, Any]]:
        """x-method -> {"params": def, "result": def | None, "side": {x-side}}."""
        out: dict[str, dict[str, Any]] = {}
        for name, definition in self.defs.items():
            method = definition.get("x-method")
            if method is None:
                continue
            entry = out.setdefault(method, {"params": None, "result": None, "side": set()})
            entry["result" if name.endswith("Response") else "params"] = name
            entry["side"].add(definition["x-side"])
        return out

    def expand(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        """The schema and every subschema combined with it ($ref, allOf, anyOf, oneOf)."""
        out: list[dict[str, Any]] = []
        stack = [schema]
        while stack:
            current = stack.pop()
            if "$ref" in current:
                stack.append(self.defs[current["$ref"].rsplit("/", 1)[1]])
            out.append(current)
            for key in ("allOf", "anyOf", "oneOf"):
                stack.extend(current.get(key, []))
        return out

    def properties(self, name: str) -> set[str]:
        """Every property `$defs/name` or a schema combined with it declares, except the
        members of an open `other` variant (`not` + `additionalProperties`)."""
        return {
            key
            for part in self.expand({"$ref": f"#/$defs/{name}"})
            if "not" not in part
            for key in part.get("properties", {})
        }

    def required(self, name: str) -> set[str]:
        """Properties `$defs/name` itself requires (not those of its variants)."""
        return set(self.defs[name].get("required", []))

    def unknown_keys(self, value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
        """Paths of object members no schema combined with `schema` declares: a misnamed field
        passes the schema itself (it never forbids additional properties)."""
        candidates = [c for c in self.expand(schema) if "not" not in c]
        found: list[str] = []
        if isinstance(value, dict):
            extra = [c["additionalProperties"] for c in candidates if "additionalProperties" in c]
            # `true`, or a branch that constrains nothing (ErrorData's "Other"): any member.
            open_any = any(e is True for e in extra) or any(map(_accepts_anything, candidates))
            typed_extra = [e for e in extra if isinstance(e, dict)]
            declared = any("properties" in c for c in candidates)
            for key, item in value.items():
                subs = [c["properties"][key] for c in candidates if key in c.get("properties", {})]
                subs = subs or typed_extra
                if subs:
                    found += self.unknown_keys(item, {"allOf": subs}, f"{path}.{key}")
                elif declared and not open_any:
                    found.append(f"{path}.{key}")
        elif isinstance(value, list):
            items = [c["items"] for c in candidates if isinstance(c.get("items"), dict)]
            for index, item in enumerate(value):
                if items:
                    found += self.unknown_keys(item, {"allOf": items}, f"{path}[{index}]")
        return found


_CONSTRAINTS = ("type", "properties", "$ref", "allOf", "anyOf", "oneOf", "enum", "const", "items")


def _accepts_anything(schema: dict[str, Any]) -> bool:
    return not any(key in schema for key in _CONSTRAINTS)


@cache
def _validator(schema: V2Schema, names: tuple[str, ...]) -> Draft202012Validator:
    if len(names) == 1:
        target: dict[str, Any] = {"$ref": f"#/$defs/{names[0]}"}
    else:
        target = {"anyOf": [{"$ref": f"#/$defs/{name}"} for name in names]}
    return Draft202012Validator({"$schema": schema.raw["$schema"], "$defs": schema.defs, **target})


STABLE = V2Schema("schema.json", json.loads((DATA / "schema.json").read_text()))
UNSTABLE = V2Schema("schema.unstable.json", json.loads((DATA / "schema.unstable.json").read_text()))
