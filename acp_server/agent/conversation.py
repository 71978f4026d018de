"""The conversation a model request carries, kept in step with the session log.

`Conversation` is built once from a session's records and then appended to as records arrive
(the loop feeds it from `SessionLog.on_append`), so a step costs what that step added, never a
pass over the whole history. It is the only place where records become conversation items,
`context/compaction` records included, so a live session and one loaded from its journal see
the same (compacted) items.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from acp_server.models import base as model
from acp_server.session import records as rec
from acp_server.session.rewind import retained


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


SUMMARY_PREFIX = (
    "[The earlier part of this conversation was compacted to save context. This is its "
    "summary; the messages after it are verbatim.]\n\n"
)


def tool_result_stub(output: str) -> str:
    """The one line an old tool result keeps once its body is dropped."""
    lines = output.count("\n") + (1 if output and not output.endswith("\n") else 0)
    return (
        f"[tool output removed to save context: {lines} lines, {len(output)} characters; "
        "run the tool again if you need it]"
    )


def trimmed(item: model.ConversationItem) -> model.ConversationItem:
    """The item with a tool result's body cut to its stub (other items and stubs unchanged)."""
    if not isinstance(item, model.ToolResultMessage) or item.output.startswith("[tool output rem"):
        return item
    return model.ToolResultMessage(  # its images go with the body
        call_id=item.call_id, output=tool_result_stub(item.output), is_error=item.is_error
    )


def summary_item(summary: str) -> model.UserMessage:
    """The message that stands for everything a summary replaced."""
    return model.UserMessage(parts=[model.TextPart(text=SUMMARY_PREFIX + summary)])


def item_chars(item: model.ConversationItem) -> int:
    """Characters of an item's text (images count as their base64), for size estimates."""
    if isinstance(item, model.UserMessage):
        return sum(
            len(p.text) if isinstance(p, model.TextPart) else len(p.data) for p in item.parts
        )
    if isinstance(item, model.AssistantMessage):
        return len(item.text) + sum(len(c.name) + len(str(c.arguments)) for c in item.tool_calls)
    return len(item.output) + sum(len(image.data) for image in item.images)


class Conversation:
    """The provider-ready items of one session, with their total size in characters.

    A turn that ended in `refusal` is taken out with everything it produced: the schema says
    the refused prompt and what followed "won't be included in the next prompt". Records of an
    open turn are contiguous at the end of a log (idle injects only happen between turns), so
    cutting back to where the turn began removes exactly that turn.
    """

    __slots__ = (
        "_block_calls",
        "_block_item",
        "_chars",
        "_hidden_calls",
        "_items",
        "_model_ids",
        "_positions",
        "_prompts",
        "_records",
        "_turn_starts",
    )

    def __init__(self, records: Iterable[rec.Record] = ()) -> None:
        self._records: list[rec.Record] = []
        """Every record applied (references), for rebuilding after a rewind."""
        self._start()
        for record in records:
            self.add(record)

    def _start(self) -> None:
        self._items: list[model.ConversationItem] = []
        self._chars = 0
        self._positions: dict[str, int] = {}
        """Item index of each user and assistant message, by message id (compaction bounds)."""
        self._prompts: list[str] = []
        """Message ids of the turns' prompts, oldest first (the turns a compaction keeps)."""
        self._turn_starts: dict[str, int] = {}
        """Item count when each turn of the log began (refusals cut back to it)."""
        self._hidden_calls: set[str] = set()
        """Calls the agent made itself (its test runs): neither they nor their results are
        the model's."""
        self._block_calls: set[str] = set()
        """Calls that applied the model's edit blocks: their results reach it as a note."""
        self._block_item: int | None = None
        """The index of the last item if it is a note of edit block results (the next result
        joins it)."""
        self._model_ids: dict[str, str] = {}
        """The model server's id of each call waiting for its result, by ours: the model is
        sent its own ids, so a call and its result pair up in a request as the server wrote
        them."""

    @property
    def items(self) -> Sequence[model.ConversationItem]:
        """The items, oldest first (a live read-only view: copy it to keep it)."""
        return self._items

    @property
    def chars(self) -> int:
        """Total characters of every item (see `item_chars`)."""
        return self._chars

    def position(self, message_id: str) -> int | None:
        """The item index of a user or assistant message still in the conversation."""
        return self._positions.get(message_id)

    def prompt_ids(self, turns: int) -> list[str]:
        """Message ids of the prompts of the last `turns` turns still in the conversation."""
        present = [m for m in self._prompts[-turns:] if m in self._positions]
        return present

    def add(self, record: rec.Record) -> None:
        """Apply one record appended to the session log."""
        self._records.append(record)
        if isinstance(record, rec.Rewind):
            # Rare: rebuilt from the records the rewind leaves (acp_server/session/rewind.py).
            self._start()
            for kept in retained(self._records):
                if not isinstance(kept, rec.Rewind):
                    self._apply(kept)
        else:
            self._apply(record)

    def _apply(self, record: rec.Record) -> None:
        if isinstance(record, rec.TurnStart):
            self._turn_starts[record.turn_id] = len(self._items)
        elif isinstance(record, rec.UserMessage):
            self._positions[record.message_id] = len(self._items)
            if record.origin == "prompt":
                self._prompts.append(record.message_id)
            self._append(model.UserMessage(parts=[part_for_model(p) for p in record.content]))
        elif isinstance(record, rec.AssistantMessage):
            if record.origin == "agent":
                # The agent's own notice or call: the model never reads it as its words.
                self._hidden_calls.update(c.call_id for c in record.tool_calls)
                return
            self._positions[record.message_id] = len(self._items)
            text = "".join(p.text for p in record.parts if isinstance(p, rec.TextPart))
            if any(c.from_text for c in record.tool_calls):
                text = ""  # the text *was* the call: the model reads it back as a call
            self._block_calls.update(c.call_id for c in record.tool_calls if c.edit_block)
            for c in record.tool_calls:
                if c.model_call_id is not None:
                    self._model_ids[c.call_id] = c.model_call_id
            calls = [
                model.ToolCallRequest(
                    call_id=c.model_call_id or c.call_id, name=c.name, arguments=c.arguments
                )
                for c in record.tool_calls
                if not c.edit_block  # the text holds those: the model reads what it wrote
            ]
            self._append(model.AssistantMessage(text=text, tool_calls=calls))
        elif isinstance(record, rec.ToolResult):
            if record.call_id in self._hidden_calls:
                return
            if record.call_id in self._block_calls:
                self._block_result(record)
                return
            self._append(
                model.ToolResultMessage(
                    call_id=self._model_ids.pop(record.call_id, record.call_id),
                    output=record.output,
                    is_error=record.status == "failed",
                    images=[
                        model.ImagePart(data=i.data, mime_type=i.mime_type) for i in record.images
                    ],
                )
            )
        elif isinstance(record, rec.TurnEndRecord):
            start = self._turn_starts.pop(record.turn_id, None)
            if isinstance(record.outcome, rec.Refusal) and start is not None:
                self._replace(self._items[:start])
        elif isinstance(record, rec.Compaction):
            bound = self._positions.get(record.kept_from)
            if bound is not None:  # else the boundary went with a refused turn: nothing to do
                self._replace(*compacted(self._items, bound, record.summary))

    def _block_result(self, record: rec.ToolResult) -> None:
        """An edit block's result, as a line of the note that follows the model's answer."""
        what = record.title or "Edit"
        verdict = "failed" if record.status == "failed" else "done"
        part = model.TextPart(text=f"[{what}: {verdict}] {record.output}")
        last = self._block_item
        if last is not None and last == len(self._items) - 1:
            note = self._items[last]
            assert isinstance(note, model.UserMessage)
            joined = model.UserMessage(parts=[*note.parts, part])
            self._items[last] = joined
            self._chars += item_chars(joined) - item_chars(note)
            return
        self._append(model.UserMessage(parts=[part]))
        self._block_item = len(self._items) - 1

    def _append(self, item: model.ConversationItem) -> None:
        self._items.append(item)
        self._chars += item_chars(item)

    def _replace(self, items: list[model.ConversationItem], shift: int = 0) -> None:
        """Swap in new items: a kept prefix (a refusal, a trim), or a summary in the first slot
        followed by the items that were at `shift + 1` onward. Rare, so a full pass is fine."""
        floor = 1 if shift else 0
        self._positions = {
            k: i - shift for k, i in self._positions.items() if floor <= i - shift < len(items)
        }
        self._prompts = [m for m in self._prompts if m in self._positions]
        self._turn_starts = {
            k: min(max(floor, i - shift), len(items)) for k, i in self._turn_starts.items()
        }
        self._items = items
        self._chars = sum(item_chars(item) for item in items)
        self._block_item = None


def compacted(
    items: Sequence[model.ConversationItem], bound: int, summary: str | None
) -> tuple[list[model.ConversationItem], int]:
    """Items after compacting those before index `bound`, and how far the kept ones moved:
    with a summary, it replaces them; without, their tool results are cut to stubs."""
    if summary is None:
        return [trimmed(item) if i < bound else item for i, item in enumerate(items)], 0
    return [summary_item(summary), *items[bound:]], bound - 1
