"""ACP content blocks <-> the runtime's durable content parts."""

from __future__ import annotations

import os
from typing import TypeVar
from urllib.parse import unquote

import anyio
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
from acp_server.tools.local_files import open_checked
from acp_server.tools.workspace import PathRefused, PathRoots

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


RESOURCE_LINK_LIMIT = 256 * 1024


async def read_resource_links(parts: list[rec.Part], path_roots: PathRoots) -> list[rec.Part]:
    """Resource links to files inside the workspace become their text (what the user meant by
    attaching them); links elsewhere stay links, with a note that they were not read."""
    resolved: list[rec.Part] = []
    for part in parts:
        if not isinstance(part, rec.ResourceLinkPart) or not part.uri.startswith("file://"):
            resolved.append(part)
            continue
        try:
            path = path_roots.resolve(unquote(part.uri.removeprefix("file://")))
        except PathRefused as exc:
            resolved.append(part)
            resolved.append(rec.TextPart(text=f"[{part.uri} was not read: {exc}]"))
            continue
        if not path_roots.contains(path):
            resolved.append(part)
            resolved.append(rec.TextPart(text=f"[{part.uri} is outside the workspace: not read]"))
            continue
        try:
            text = await anyio.to_thread.run_sync(_read_head, path)
        except OSError as exc:
            resolved.append(part)
            resolved.append(rec.TextPart(text=f"[{part.uri} could not be read: {exc.strerror}]"))
            continue
        except PathRefused as exc:  # a FIFO or device (it would block), or a swapped link
            resolved.append(part)
            resolved.append(rec.TextPart(text=f"[{part.uri} was not read: {exc}]"))
            continue
        resolved.append(rec.ResourcePart(uri=part.uri, text=text, mime_type=part.mime_type))
    return resolved


def _read_head(path: str) -> str:
    with open(open_checked(path, os.O_RDONLY), "rb") as file:
        data = file.read(RESOURCE_LINK_LIMIT + 1)
    text = data[:RESOURCE_LINK_LIMIT].decode("utf-8", errors="replace")
    if len(data) > RESOURCE_LINK_LIMIT:
        text += f"\n[truncated after {RESOURCE_LINK_LIMIT} bytes]"
    return text
