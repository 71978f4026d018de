"""Turn the session log into the conversation a model request carries."""

from __future__ import annotations

from collections.abc import Sequence

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


def conversation_from(records: Sequence[rec.Record]) -> list[model.ConversationItem]:
    """Model input for a session log.

    A turn that ended in `refusal` is left out with everything it produced: the schema says the
    refused prompt and what followed "won't be included in the next prompt".
    """
    refused = {
        r.turn_id
        for r in records
        if isinstance(r, rec.TurnEndRecord) and isinstance(r.outcome, rec.Refusal)
    }
    items: list[model.ConversationItem] = []
    for record in records:
        turn_id = getattr(record, "turn_id", None)
        if turn_id is not None and turn_id in refused:
            continue
        if isinstance(record, rec.UserMessage):
            items.append(model.UserTurn(parts=[part_for_model(p) for p in record.content]))
        elif isinstance(record, rec.AssistantMessage):
            text = "".join(p.text for p in record.parts if isinstance(p, rec.TextPart))
            calls = [
                model.ToolCallRequest(call_id=c.call_id, name=c.name, arguments=c.arguments)
                for c in record.tool_calls
            ]
            items.append(model.AssistantTurn(text=text, tool_calls=calls))
        elif isinstance(record, rec.ToolResult):
            items.append(
                model.ToolResultTurn(
                    call_id=record.call_id,
                    output=record.output,
                    is_error=record.status == "failed",
                )
            )
    return items
