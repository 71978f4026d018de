"""The `ask_user` tool: the model asks the user a form question (ACP `elicitation/create`,
form mode). Offered only in a session whose client advertised form elicitation.

The tool knows no wire types: it hands the message and the form (the restricted JSON Schema
ACP allows: a flat object whose fields are strings, numbers, integers, booleans or
multi-selects) to a `FormAsker`, which the bridge implements. The user's answer, a decline or
a cancel in the form comes back as the tool's result. A cancelled turn stops the wait at once
(`TurnAborted`): the bridge withdraws the open request with `$/cancel_request`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol

import msgspec

from acp_server.cancellation import TurnSignal

from .arguments import StructTool, schema_of
from .base import Location, ToolCallContext, ToolKind, ToolOutput

FormAction = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class FormAnswer:
    """What the user did with the form; `content` holds the fields of an accepted one."""

    action: FormAction
    content: Mapping[str, Any] | None = None


class AskFailed(Exception):
    """The question could not be asked (a form the protocol does not allow, or the client
    failed); the message says why, for the model."""


class FormAsker(Protocol):
    async def ask(
        self, message: str, form: Mapping[str, Any], call_id: str, signal: TurnSignal
    ) -> FormAnswer:
        """Ask the user; raises `AskFailed` when the question cannot be asked and
        `TurnAborted` when the turn is cancelled while it is open."""


FieldType = Literal["string", "number", "integer", "boolean", "array"]


class FormField(msgspec.Struct):
    # What the model is told of one field; its other keys (title, enum, format, ...) are
    # checked where the form becomes ACP's (the bridge), which says what it refuses.
    type: FieldType


class FormShape(msgspec.Struct, kw_only=True):
    # The shape of `form` the model is told (tools/arguments.py makes it a schema); the form
    # itself passes through whole, as a mapping.
    type: Literal["object"] = "object"
    properties: dict[str, FormField]
    required: list[str] = []


class AskUserArgs(msgspec.Struct, forbid_unknown_fields=True):
    message: Annotated[str, msgspec.Meta(description="The question, for the user.")]
    form: Annotated[
        dict[str, Any],
        msgspec.Meta(
            description="The form: a flat object schema (see the tool description).",
            extra_json_schema=schema_of(FormShape),
        ),
    ]


class AskUser(StructTool[AskUserArgs]):
    """`ask_user {message, form}`: one form question to the user."""

    name = "ask_user"
    kind: ToolKind = "think"
    args_type = AskUserArgs
    description = (
        "Ask the user a question with a small form and wait for the answer. Use it when you "
        "cannot go on without the user's decision or information (not for things you can find "
        "out with tools). `message` says what you need and why; `form` is a flat JSON Schema "
        'object: {"type": "object", "properties": {NAME: FIELD, ...}, "required": [NAME, ...]}, '
        "where each FIELD has a `type` of string (optional `enum` for a choice, `format` "
        "email/uri/date/date-time, `minLength`, `maxLength`), number or integer (`minimum`, "
        "`maximum`), boolean, or array (a multi-select: `items` with `type` string and `enum`), "
        "and optional `title`, `description` and `default`. The result says whether the user "
        "answered (with the values), declined or cancelled."
    )

    def __init__(self, asker: FormAsker) -> None:
        self._asker = asker

    def title(self, arguments: Mapping[str, Any]) -> str:
        message = arguments.get("message")
        return f"Ask: {message.strip()[:60]}" if isinstance(message, str) else "Ask the user"

    def locations(self, arguments: Mapping[str, Any]) -> list[Location]:
        return []

    async def act(self, args: AskUserArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        if not args.message.strip():
            return ToolOutput(
                "Invalid arguments for ask_user: `message` must be a non-empty string", failed=True
            )
        try:
            answer = await self._asker.ask(args.message, args.form, call.call_id, signal)
        except AskFailed as exc:
            return ToolOutput(f"The question was not asked: {exc}", failed=True)
        if answer.action == "accept":
            values = json.dumps(dict(answer.content or {}), ensure_ascii=False)
            return ToolOutput(f"The user answered: {values}")
        if answer.action == "decline":
            return ToolOutput("The user declined to answer.")
        return ToolOutput("The user cancelled the question without answering.")
