"""The `ask_user` tool (acp_server/tools/ask_user.py) with a form asker double: the message and
the whole form reach the asker with the call's id, an answer, a decline and a cancel each read
as a result the model can use, a question that cannot be asked fails the call saying why, and
arguments are checked before anyone is asked. The form on the wire, a client's answers and a
cancel through the real process: tests/e2e/test_elicitation_acp.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from acp_server.cancellation import TurnCancellation, TurnSignal
from acp_server.tools.ask_user import AskFailed, AskUser, FormAnswer
from acp_server.tools.base import ToolOutput
from tests.support.tool_call import a_call

pytestmark = pytest.mark.anyio

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "colour": {"type": "string", "enum": ["red", "blue"]},
    },
    "required": ["name"],
}


class Asker:
    """Answers with `answer` (or raises it), keeping what it was asked."""

    def __init__(self, answer: FormAnswer | Exception) -> None:
        self.answer = answer
        self.asked: list[tuple[str, Mapping[str, Any], str]] = []

    async def ask(
        self, message: str, form: Mapping[str, Any], call_id: str, signal: TurnSignal
    ) -> FormAnswer:
        self.asked.append((message, form, call_id))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def ask(asker: Asker, **arguments: Any) -> ToolOutput:
    tool = AskUser(asker)
    return await tool.run(arguments, a_call("call_7"), TurnCancellation().signal)


async def test_the_message_and_the_whole_form_reach_the_asker_and_the_answer_comes_back() -> None:
    asker = Asker(FormAnswer("accept", {"name": "Zoë", "colour": "blue"}))
    output = await ask(asker, message="Who are you?", form=FORM)
    assert asker.asked == [("Who are you?", FORM, "call_7")]
    assert output == ToolOutput('The user answered: {"name": "Zoë", "colour": "blue"}')


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (FormAnswer("decline"), "The user declined to answer."),
        (FormAnswer("cancel"), "The user cancelled the question without answering."),
        (FormAnswer("accept"), "The user answered: {}"),
    ],
)
async def test_a_decline_a_cancel_and_an_empty_answer_each_say_so(
    answer: FormAnswer, text: str
) -> None:
    assert await ask(Asker(answer), message="Go on?", form=FORM) == ToolOutput(text)


async def test_a_question_that_cannot_be_asked_fails_the_call_saying_why() -> None:
    asker = Asker(AskFailed("the form's field `when` has an unsupported format `time`"))
    output = await ask(asker, message="When?", form=FORM)
    assert output.failed
    assert output.text == (
        "The question was not asked: the form's field `when` has an unsupported format `time`"
    )


async def test_a_blank_message_or_a_form_of_the_wrong_shape_asks_nobody() -> None:
    asker = Asker(FormAnswer("accept", {}))
    blank = await ask(asker, message="  ", form=FORM)
    assert blank.failed and "`message` must be a non-empty string" in blank.text
    wrong = await ask(asker, message="Hi", form="a string")
    assert wrong == ToolOutput(
        "Invalid arguments for ask_user: Expected `object`, got `str` (argument `form`)",
        failed=True,
    )
    assert asker.asked == []


def test_the_title_shows_the_start_of_the_question() -> None:
    tool = AskUser(Asker(FormAnswer("cancel")))
    assert tool.title({"message": "  Which branch should I use?  "}) == (
        "Ask: Which branch should I use?"
    )
    assert tool.title({}) == "Ask the user"
