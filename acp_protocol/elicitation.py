"""`elicitation/create` and `elicitation/complete`: the agent asks the user for structured input
(a form described by a restricted JSON Schema) or sends them to a URL."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import RequestId, Wire

__all__ = [
    "BooleanPropertySchema",
    "CompleteElicitationNotification",
    "CreateElicitationRequest",
    "CreateElicitationResponse",
    "ElicitationAction",
    "ElicitationContentValue",
    "ElicitationMode",
    "ElicitationPropertySchema",
    "ElicitationSchema",
    "EnumOption",
    "IntegerPropertySchema",
    "MultiSelectItems",
    "MultiSelectPropertySchema",
    "NumberPropertySchema",
    "StringFormat",
    "StringPropertySchema",
]

StringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"]
ElicitationMode: TypeAlias = Literal["form", "url"]
ElicitationAction: TypeAlias = Literal["accept", "decline", "cancel"]
ElicitationContentValue: TypeAlias = str | int | float | bool | list[str]


class EnumOption(Wire, frozen=True, kw_only=True):
    """A selectable value (`const`) with a display `title`."""

    const: str
    title: str
    description: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StringPropertySchema(Wire, frozen=True, kw_only=True, tag_field="type", tag="string"):
    """A string field; `enum` / `one_of` make it a single choice."""

    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    min_length: int | UnsetType | None = UNSET
    max_length: int | UnsetType | None = UNSET
    pattern: str | UnsetType | None = UNSET
    format: StringFormat | UnsetType | None = UNSET
    default: str | UnsetType | None = UNSET
    enum: list[str] | UnsetType | None = UNSET
    one_of: list[EnumOption] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class NumberPropertySchema(Wire, frozen=True, kw_only=True, tag_field="type", tag="number"):
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    minimum: float | UnsetType | None = UNSET
    maximum: float | UnsetType | None = UNSET
    default: float | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class IntegerPropertySchema(Wire, frozen=True, kw_only=True, tag_field="type", tag="integer"):
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    minimum: int | UnsetType | None = UNSET
    maximum: int | UnsetType | None = UNSET
    default: int | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class BooleanPropertySchema(Wire, frozen=True, kw_only=True, tag_field="type", tag="boolean"):
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    default: bool | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# One Struct for the schema's untagged `StringMultiSelectItems | TitledMultiSelectItems` (plus an
# open "unknown type" variant): plain values have `type: "string"` + `enum`, titled values have
# no `type` and `any_of`.
class MultiSelectItems(Wire, frozen=True, kw_only=True):
    """The items of a multi-select: `enum` (with `type="string"`) or titled `any_of` options."""

    type: Literal["string"] | str | UnsetType = UNSET
    enum: list[str] | UnsetType = UNSET
    any_of: list[EnumOption] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.type == "string" and self.enum is UNSET:
            raise ValueError("string multi-select items need `enum`")
        if self.type is UNSET and self.any_of is UNSET:
            raise ValueError("titled multi-select items need `anyOf`")


class MultiSelectPropertySchema(Wire, frozen=True, kw_only=True, tag_field="type", tag="array"):
    """A multiple-choice field."""

    items: MultiSelectItems
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    min_items: int | UnsetType | None = UNSET
    max_items: int | UnsetType | None = UNSET
    default: list[str] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


ElicitationPropertySchema: TypeAlias = (
    StringPropertySchema
    | NumberPropertySchema
    | IntegerPropertySchema
    | BooleanPropertySchema
    | MultiSelectPropertySchema
)
"""Field schemas, tagged by `type`. (The schema's open "unknown type" variant is not decodable.)"""


class ElicitationSchema(Wire, frozen=True, kw_only=True):
    """The form of a `form` elicitation: a flat object schema.

    `type` is always "object" (the schema's default); it is sent only when set explicitly.
    """

    type: Literal["object"] | UnsetType = UNSET
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    properties: dict[str, ElicitationPropertySchema] = msgspec.field(default_factory=dict)
    required: list[str] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# One Struct for the schema's `ElicitationFormMode | ElicitationUrlMode` (each scoped by
# `ElicitationSessionScope | ElicitationRequestScope`): the variants share `mode` but the scope
# is untagged, and `mode` is open. `__post_init__` checks the fields each known mode needs.
class CreateElicitationRequest(Wire, frozen=True, kw_only=True):
    """Params of `elicitation/create`.

    `mode="form"` needs `requested_schema`; `mode="url"` needs `elicitation_id` and `url`. The
    scope is a session (`session_id`, optionally `tool_call_id`) or a pending request
    (`request_id`).
    """

    message: str
    mode: ElicitationMode | str
    requested_schema: ElicitationSchema | UnsetType = UNSET
    elicitation_id: str | UnsetType = UNSET
    url: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    tool_call_id: str | UnsetType | None = UNSET
    request_id: RequestId | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.session_id is UNSET and self.request_id is UNSET:
            raise ValueError("an elicitation needs `sessionId` or `requestId`")
        if self.mode == "form" and self.requested_schema is UNSET:
            raise ValueError("a form elicitation needs `requestedSchema`")
        if self.mode == "url" and (self.elicitation_id is UNSET or self.url is UNSET):
            raise ValueError("a url elicitation needs `elicitationId` and `url`")


# The schema's tagged-by-`action` variants (accept/decline/cancel, plus unknown actions) are one
# Struct: only "accept" carries a field (`content`), and `action` is open.
class CreateElicitationResponse(Wire, frozen=True, kw_only=True):
    """Result of `elicitation/create`: `action` and, on accept, the form `content`."""

    action: ElicitationAction | str
    content: dict[str, ElicitationContentValue] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CompleteElicitationNotification(Wire, frozen=True, kw_only=True):
    """Params of `elicitation/complete`: the URL elicitation `elicitation_id` finished."""

    elicitation_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
