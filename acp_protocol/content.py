"""Content blocks (`ContentBlock`, tagged by `type`), shared with MCP."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire

__all__ = [
    "Annotations",
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "Role",
    "TextContent",
]

Role: TypeAlias = Literal["assistant", "user"]


class Annotations(Wire, frozen=True, kw_only=True):
    """Optional hints on how a client may use or display a content block."""

    audience: list[Role] | UnsetType | None = UNSET
    last_modified: str | UnsetType | None = UNSET
    priority: float | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TextContent(Wire, frozen=True, kw_only=True, tag_field="type", tag="text"):
    """Plain text. Every agent must accept it in prompts."""

    text: str
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ImageContent(Wire, frozen=True, kw_only=True, tag_field="type", tag="image"):
    """A base64-encoded image (prompt capability `image`)."""

    data: str
    mime_type: str
    uri: str | UnsetType | None = UNSET
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AudioContent(Wire, frozen=True, kw_only=True, tag_field="type", tag="audio"):
    """Base64-encoded audio (prompt capability `audio`)."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ResourceLink(Wire, frozen=True, kw_only=True, tag_field="type", tag="resource_link"):
    """A reference to a resource the agent can fetch itself. Every agent must accept it."""

    uri: str
    name: str
    mime_type: str | UnsetType | None = UNSET
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    size: int | UnsetType | None = UNSET
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# One Struct for the schema's untagged `TextResourceContents | BlobResourceContents`: msgspec
# cannot decode an untagged union of Structs, so `text` and `blob` are both optional here and
# `__post_init__` requires one of them.
class ResourceContents(Wire, frozen=True, kw_only=True):
    """The `resource` of an embedded resource: text contents or base64 `blob` contents."""

    uri: str
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    mime_type: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.text is UNSET and self.blob is UNSET:
            raise ValueError("resource contents need `text` or `blob`")


class EmbeddedResource(Wire, frozen=True, kw_only=True, tag_field="type", tag="resource"):
    """A resource's contents inlined in the message (prompt capability `embeddedContext`)."""

    resource: ResourceContents
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)
