"""Turn the session log into the conversation a model request carries."""

from __future__ import annotations

from collections.abc import Sequence

from acp_server.models import base as model
from acp_server.session import records as rec
from acp_server.session.log import SessionLog


def part_for_model(part: rec.Part) -> model.Part:
    """A durable content part as the model sees it."""
    if isinstance(part, rec.TextPart):
        return model.TextPart(text=part.text)
    if isinstance(part, rec.ImagePart):
        return model.ImagePart(data=part.data, mime_type=part.mime_type)
    if isinstance(part, rec.ResourcePart):
        body = part.text if part.text is not None else "(binary content omitted)"
        return model.TextPart(text=f'<resource uri="{part.uri}">\n{body}\n</resource>')
    return model.TextPart(text=f"[resource link: {part.name} <{part.uri}>]")


class Conversation:
    """The model input of a session log, kept current as records are appended.

    Converting the whole log for every model request made each turn cost the length of the
    history before it (10,000 queued prompts were answered at a falling rate); this converts
    each record once, when it is appended.

    A turn that ended in `refusal` is left out with everything it produced: the schema says the
    refused prompt and what followed "won't be included in the next prompt".
    """

    def __init__(self, log: SessionLog) -> None:
        self._items: list[model.ConversationItem] = []
        self._item_turns: list[str | None] = []  # the turn of each item, for refusals
        self._refused: set[str] = set()
        for record in log.records:
            self._add(record)
        log.on_append(self._add)

    @property
    def items(self) -> Sequence[model.ConversationItem]:
        """The conversation so far, oldest first (live: copy it to keep it)."""
        return self._items

    def _add(self, record: rec.Record) -> None:
        turn_id: str | None = getattr(record, "turn_id", None)
        if isinstance(record, rec.TurnEnd) and isinstance(record.outcome, rec.Refusal):
            self._refused.add(record.turn_id)
            kept = [
                (item, turn)
                for item, turn in zip(self._items, self._item_turns, strict=True)
                if turn != record.turn_id
            ]
            self._items = [item for item, _ in kept]
            self._item_turns = [turn for _, turn in kept]
            return
        if turn_id is not None and turn_id in self._refused:
            return
        item = _item_for(record)
        if item is not None:
            self._items.append(item)
            self._item_turns.append(turn_id)


def _item_for(record: rec.Record) -> model.ConversationItem | None:
    if isinstance(record, rec.UserMessage):
        return model.UserTurn(parts=[part_for_model(p) for p in record.content])
    if isinstance(record, rec.AssistantMessage):
        text = "".join(p.text for p in record.parts if isinstance(p, rec.TextPart))
        calls = [
            model.ToolCallRequest(call_id=c.call_id, name=c.name, arguments=c.arguments)
            for c in record.tool_calls
        ]
        return model.AssistantTurn(text=text, tool_calls=calls)
    if isinstance(record, rec.ToolResult):
        return model.ToolResultTurn(
            call_id=record.call_id, output=record.output, is_error=record.status == "failed"
        )
    return None
