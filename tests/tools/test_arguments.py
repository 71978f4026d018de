"""A tool's arguments declared once (acp_server/tools/arguments.py): the schema the model is sent
is msgspec's, shaped as a tool's `parameters`, and a call's arguments are decoded into the same
Struct before the tool acts. What the model is sent of every tool is pinned byte for byte in
tests/agent/test_tool_lists.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.tools.arguments import StructTool, schema_of
from acp_server.tools.base import ToolCallContext, ToolOutput
from acp_server.tools.toolbox import Machine, Toolbox, ToolSettings, Transports
from tests.support.tool_call import a_call
from tests.support.turns import fresh_signal

pytestmark = pytest.mark.anyio

Colour = Literal["red", "green", "blue"]


class Step(msgspec.Struct, forbid_unknown_fields=True):
    """A docstring for the code, not for the model."""

    what: Annotated[str, msgspec.Meta(description="The step.")]
    colour: Colour = "green"


class Args(msgspec.Struct, forbid_unknown_fields=True):
    """Neither is this."""

    path: Annotated[str, msgspec.Meta(description="Where.")]
    start: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="From here (default 1).", extra_json_schema={"default": 1}),
    ] = None
    quiet: Annotated[bool, msgspec.Meta(description="Say less.")] = False
    steps: Annotated[list[Step], msgspec.Meta(description="In order.")] = []
    tags: frozenset[Colour] | None = None


def test_the_schema_is_shaped_as_tool_parameters() -> None:
    assert json.dumps(schema_of(Args)) == json.dumps(
        {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Where."},
                # optional: just the type; the default stated only because its Meta says so
                "start": {
                    "type": "integer",
                    "minimum": 1,
                    "default": 1,
                    "description": "From here (default 1).",
                },
                # a Struct default alone is not stated
                "quiet": {"type": "boolean", "description": "Say less."},
                # a nested Struct in place: no $ref, no title, no docstring
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "what": {"type": "string", "description": "The step."},
                            # the Literal's own order (msgspec sorts it), with its type
                            "colour": {"type": "string", "enum": ["red", "green", "blue"]},
                        },
                        "required": ["what"],
                        "additionalProperties": False,
                    },
                    "description": "In order.",
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["red", "green", "blue"]},
                    "uniqueItems": True,
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        }
    )


def test_an_object_without_required_fields_says_so() -> None:
    class Nothing(msgspec.Struct, forbid_unknown_fields=True):
        maybe: str | None = None

    assert schema_of(Nothing)["required"] == []


class Echo(StructTool[Args]):
    name = "echo"
    description = "Says where."
    kind = "think"
    args_type = Args

    def __init__(self) -> None:
        self.calls: list[tuple[Args, str]] = []

    async def act(self, args: Args, call: ToolCallContext, signal: Any) -> ToolOutput:
        self.calls.append((args, call.call_id))
        return ToolOutput(args.path)


async def test_run_decodes_into_the_struct_and_acts_with_the_call() -> None:
    tool = Echo()
    output = await tool.run(
        {"path": "here", "steps": [{"what": "x"}]}, a_call("c7"), fresh_signal()
    )
    assert output == ToolOutput("here")
    [(args, call_id)] = tool.calls
    assert args.steps == [Step("x")] and args.start is None and call_id == "c7"
    assert tool.parameters is schema_of(Args)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({}, "Invalid arguments for echo: missing required argument `path`"),
        ({"path": "x", "nope": 1}, "Invalid arguments for echo: unknown argument `nope`"),
        (
            {"path": "x", "start": 0},
            "Invalid arguments for echo: Expected `int` >= 1 (argument `start`)",
        ),
        (
            {"path": "x", "steps": [{"what": "a", "colour": "pink"}]},
            "Invalid arguments for echo: Invalid enum value 'pink' (argument `steps[0].colour`)",
        ),
        ([1, 2], "Invalid arguments for echo: expected a JSON object"),
    ],
)
async def test_arguments_that_do_not_fit_are_told_with_their_path(
    arguments: Any, said: str
) -> None:
    tool = Echo()
    output = await tool.run(arguments, a_call(), fresh_signal())
    assert output.failed and output.text == said and tool.calls == []


async def test_an_aborted_signal_runs_nothing() -> None:
    tool = Echo()
    cancellation = TurnCancellation()
    cancellation.abort(UserCancel())
    with pytest.raises(TurnAborted):
        await tool.run({"path": "x"}, a_call(), cancellation.signal)
    assert tool.calls == []


def test_every_tool_of_a_session_states_the_schema_of_its_struct(tmp_path: Path) -> None:
    """No tool's parameters are written beside its Struct: each is the generated schema."""
    (tmp_path / "ws").mkdir()
    toolbox = Toolbox.for_session(
        str(tmp_path / "ws"), [], ToolSettings(), Transports(), Machine(tmp_path), user_dir=None
    )
    toolbox.offer_skill()
    for tool in toolbox.tools:
        assert isinstance(tool, StructTool), tool.name
        assert tool.parameters == schema_of(tool.args_type), tool.name
        assert "parameters" not in type(tool).__dict__, f"{tool.name} writes its own schema"
