"""A tool's arguments, declared once: a msgspec Struct. The JSON schema the model is sent is
generated from it (`schema_of`), and a call's arguments are decoded into it (`StructTool`).

The schema is msgspec's (`msgspec.json.schema`), shaped the way a tool's `parameters` are
written for a model: one object with its properties in place (no `$ref`), each property
`type` first and its `description` last; an optional field (`T | None = None`) is just `T`;
a `Literal` lists its values in the order the code declares them, with `"type": "string"`;
a Struct's docstring and title stay in the code. A default is stated only where a field's
`msgspec.Meta` says so (`extra_json_schema={"default": ...}`): the description usually says
it in words, and `None` means "absent" to the code, never a value the model should send.
See docs/rfc/implemented/architecture/2026-12-06-toolbox-and-one-entry-point.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import (
    Annotated,
    Any,
    Generic,
    Literal,
    TypeVar,
    get_args,
    get_origin,
    get_type_hints,
)

import msgspec

from acp_server.cancellation import TurnSignal

from .base import ToolCallContext, ToolOutput

A = TypeVar("A", bound=msgspec.Struct)

_AT = re.compile(r"^(?P<text>.*?)(?: - at `\$(?P<where>.*)`)?$", re.DOTALL)

_NOT_TOLD = object()
"""A field whose default the schema does not state."""


@functools.cache
def schema_of(args_type: type[msgspec.Struct]) -> dict[str, Any]:
    """The JSON schema of `args_type`'s fields, as a tool's `parameters` (one object, shaped
    as the module docstring says). Computed once per type; do not change the result."""
    generated = msgspec.json.schema(args_type)
    shaper = _Shaper(generated.get("$defs", {}), _told_defaults(args_type), _orders(args_type))
    shaped: dict[str, Any] = shaper.node(generated)
    return shaped


class _Shaper:
    def __init__(
        self,
        defs: Mapping[str, Any],
        told: Mapping[str, Mapping[str, Any]],
        orders: Mapping[frozenset[Any], list[Any]],
    ) -> None:
        self._defs = defs
        self._told = told
        self._orders = orders

    def node(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.node(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            return self._struct(name, self._defs[name])
        if "anyOf" in node:
            node = _without_null(node)
        shaped: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title":
                continue
            if key == "properties" and isinstance(value, dict):
                shaped[key] = {name: self.node(spec) for name, spec in value.items()}
            else:
                shaped[key] = self.node(value)
        enum = shaped.get("enum")
        if isinstance(enum, list):
            shaped["enum"] = self._orders.get(frozenset(enum), enum)
            if "type" not in shaped and all(isinstance(value, str) for value in enum):
                shaped["type"] = "string"
        return _ordered(shaped)

    def _struct(self, name: str, definition: Mapping[str, Any]) -> dict[str, Any]:
        """A Struct as an object schema: its properties, with the defaults its fields' Meta
        state; `required` always (empty too); no title or docstring."""
        told = self._told.get(name, {})
        properties: dict[str, Any] = {}
        for field, spec in definition.get("properties", {}).items():
            shaped = self.node({key: value for key, value in spec.items() if key != "default"})
            default = told.get(field, _NOT_TOLD)
            if default is not _NOT_TOLD:
                shaped = _ordered({**shaped, "default": default})
            properties[field] = shaped
        result: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": list(definition.get("required", [])),
        }
        if "additionalProperties" in definition:
            result["additionalProperties"] = self.node(definition["additionalProperties"])
        return result


def _without_null(node: Mapping[str, Any]) -> dict[str, Any]:
    """`T | None` as `T`: the null branch of an `anyOf` of two dropped, the other in place."""
    branches = [branch for branch in node["anyOf"] if branch != {"type": "null"}]
    if len(branches) != 1 or len(branches) == len(node["anyOf"]):
        return dict(node)
    merged: dict[str, Any] = {}
    for key, value in node.items():
        if key == "anyOf":
            merged.update(branches[0])
        else:
            merged[key] = value
    return merged


def _ordered(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`type` first, then what the type says (items, enum, bounds, properties), then the
    default, then the description."""
    last = ("default", "description")
    first = {"type": schema["type"]} if "type" in schema else {}
    middle = {key: value for key, value in schema.items() if key != "type" and key not in last}
    return {**first, **middle, **{key: schema[key] for key in last if key in schema}}


def _structs(tp: Any, found: dict[str, type[msgspec.Struct]]) -> dict[str, type[msgspec.Struct]]:
    """Every Struct type reachable from annotation `tp`, by name (as msgspec names `$defs`)."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        if tp.__name__ not in found:
            found[tp.__name__] = tp
            for hint in get_type_hints(tp, include_extras=True).values():
                _structs(hint, found)
        return found
    for arg in get_args(tp):
        _structs(arg, found)
    return found


def _told_defaults(args_type: type[msgspec.Struct]) -> dict[str, dict[str, Any]]:
    """For each Struct, the fields whose Meta states a default, with it (by encoded name)."""
    told: dict[str, dict[str, Any]] = {}
    for name, struct in _structs(args_type, {}).items():
        hints = get_type_hints(struct, include_extras=True)
        for field in msgspec.structs.fields(struct):
            hint = hints[field.name]
            if get_origin(hint) is not Annotated:
                continue
            for meta in get_args(hint)[1:]:
                extra = getattr(meta, "extra_json_schema", None) or {}
                if "default" in extra:
                    told.setdefault(name, {})[field.encode_name] = extra["default"]
    return told


def _orders(
    tp: Any, found: dict[frozenset[Any], list[Any]] | None = None
) -> dict[frozenset[Any], list[Any]]:
    """The values of every `Literal` reachable from `tp`, in the order they are declared
    (msgspec sorts them)."""
    found = {} if found is None else found
    if get_origin(tp) is Literal:
        values = list(get_args(tp))
        found.setdefault(frozenset(values), values)
    elif isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        for hint in get_type_hints(tp, include_extras=True).values():
            _orders(hint, found)
    else:
        for arg in get_args(tp):
            _orders(arg, found)
    return found


def format_validation_error(tool: str, error: msgspec.ValidationError) -> str:
    """A msgspec error rephrased in terms of the tool's arguments."""
    match = _AT.match(str(error))
    text, where = (match["text"], (match["where"] or "").lstrip(".")) if match else (str(error), "")
    if where:
        text = text.replace("Object missing required field", "missing required field")
        return f"Invalid arguments for {tool}: {text} (argument `{where}`)"
    text = text.replace("Object missing required field", "missing required argument")
    text = text.replace("Object contains unknown field", "unknown argument")
    return f"Invalid arguments for {tool}: {text}"


class StructTool(Generic[A]):
    """A tool whose arguments are the Struct `args_type`: its `parameters` are generated from
    it, and `run` (the one entry point the agent calls) decodes a call's arguments into it
    before `act` (a failed output naming the argument when they do not fit)."""

    name: str
    description: str
    args_type: type[A]

    @property
    def parameters(self) -> Mapping[str, Any]:
        """The JSON schema of the arguments, generated from `args_type`."""
        return schema_of(self.args_type)

    def decode(self, arguments: Mapping[str, Any]) -> A | ToolOutput:
        """`arguments` as `args_type`, or a failed output that says what does not fit."""
        if not isinstance(arguments, Mapping):
            return ToolOutput(
                f"Invalid arguments for {self.name}: expected a JSON object", failed=True
            )
        try:
            return msgspec.convert(dict(arguments), type=self.args_type)
        except msgspec.ValidationError as exc:
            return ToolOutput(format_validation_error(self.name, exc), failed=True)

    async def run(
        self, arguments: Mapping[str, Any], call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        """Check the signal, decode `arguments`, then `act`."""
        signal.raise_if_aborted()
        args = self.decode(arguments)
        if isinstance(args, ToolOutput):
            return args
        return await self.act(args, call, signal)

    async def act(self, args: A, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        """Do the work with decoded `args`; `call` is the tool call served (its id, progress
        and terminal). Stop promptly when `signal` aborts (raise `TurnAborted`)."""
        raise NotImplementedError
