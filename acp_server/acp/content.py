"""ACP content blocks <-> the runtime's durable content parts."""

from __future__ import annotations

from typing import TypeVar

from msgspec import UnsetType

from acp_protocol.content import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from acp_server.session import records as rec

T = TypeVar("T")


def parts_from_prompt(blocks: list[ContentBlock]) -> list[rec.Part]:
    """The prompt as durable parts. Audio is not advertised, so a client never sends it; if
    one does, it is described rather than dropped silently."""
    parts: list[rec.Part] = []
    for block in blocks:
        if isinstance(block, TextContent):
            parts.append(rec.TextPart(text=block.text))
        elif isinstance(block, ImageContent):
            parts.append(
                rec.ImagePart(data=block.data, mime_type=block.mime_type, uri=_opt(block.uri))
            )
        elif isinstance(block, ResourceLink):
            parts.append(
                rec.ResourceLinkPart(
                    uri=block.uri,
                    name=block.name,
                    mime_type=_opt(block.mime_type),
                    title=_opt(block.title),
                    description=_opt(block.description),
                    size=_opt(block.size),
                )
            )
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            parts.append(
                rec.ResourcePart(
                    uri=resource.uri,
                    text=_opt(resource.text),
                    blob=_opt(resource.blob),
                    mime_type=_opt(resource.mime_type),
                )
            )
        elif isinstance(block, AudioContent):
            parts.append(rec.TextPart(text=f"[audio attachment ({block.mime_type}) omitted]"))
    return parts


def _opt(value: T | UnsetType | None) -> T | None:
    """UNSET or None -> None; anything else unchanged."""
    return None if isinstance(value, UnsetType) else value
