"""The conversation a model request carries, kept in step with the session log.

`Conversation` is built once from a session's records and then appended to as records arrive
(the loop feeds it from `SessionLog.on_append`), so a step costs what that step added, never a
pass over the whole history. It is the only place where records become conversation items:
a live session and one loaded from its journal see the same items.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from acp_server.models import base as model
from acp_server.session import records as rec


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


def item_chars(item: model.ConversationItem) -> int:
    """Characters of an item's text (images count as their base64), for size estimates."""
    if isinstance(item, model.UserTurn):
        return sum(
            len(p.text) if isinstance(p, model.TextPart) else len(p.data) for p in item.parts
        )
    if isinstance(item, model.AssistantTurn):
        return len(item.text) + sum(len(c.name) + len(str(c.arguments)) for c in item.tool_calls)
    return len(item.output)


class Conversation:
    """The provider-ready items of one session, with their total size in characters.

    A turn that ended in `refusal` is taken out with everything it produced: the schema says
    the refused prompt and what followed "won't be included in the next prompt". Records of an
    open turn are contiguous at the end of a log (idle injects only happen between turns), so
    cutting back to where the turn began removes exactly that turn.
    """

    __slots__ = ("_chars", "_items", "_turn_starts")

    def __init__(self, records: Iterable[rec.Record] = ()) -> None:
        self._items: list[model.ConversationItem] = []
        self._chars = 0
        self._turn_starts: dict[str, int] = {}
        """Item count when each turn of the log began (refusals cut back to it)."""
        for record in records:
            self.add(record)

    @property
    def items(self) -> Sequence[model.ConversationItem]:
        """The items, oldest first (a live read-only view: copy it to keep it)."""
        return self._items

    @property
    def chars(self) -> int:
        """Total characters of every item (see `item_chars`)."""
        return self._chars

    def add(self, record: rec.Record) -> None:
        """Apply one record appended to the session log."""
        if isinstance(record, rec.TurnStart):
            self._turn_starts[record.turn_id] = len(self._items)
        elif isinstance(record, rec.UserMessage):
            self._append(model.UserTurn(parts=[part_for_model(p) for p in record.content]))
        elif isinstance(record, rec.AssistantMessage):
            text = "".join(p.text for p in record.parts if isinstance(p, rec.TextPart))
            calls = [
                model.ToolCallRequest(call_id=c.call_id, name=c.name, arguments=c.arguments)
                for c in record.tool_calls
            ]
            self._append(model.AssistantTurn(text=text, tool_calls=calls))
        elif isinstance(record, rec.ToolResult):
            self._append(
                model.ToolResultTurn(
                    call_id=record.call_id,
                    output=record.output,
                    is_error=record.status == "failed",
                )
            )
        elif isinstance(record, rec.TurnEndRecord):
            start = self._turn_starts.pop(record.turn_id, None)
            if isinstance(record.outcome, rec.Refusal) and start is not None:
                self._replace(self._items[:start])

    def _append(self, item: model.ConversationItem) -> None:
        self._items.append(item)
        self._chars += item_chars(item)

    def _replace(self, items: list[model.ConversationItem]) -> None:
        """Swap in new items (rare: a refusal), recounting their size."""
        self._items = items
        self._chars = sum(item_chars(item) for item in items)
        self._turn_starts = {k: min(i, len(items)) for k, i in self._turn_starts.items()}
