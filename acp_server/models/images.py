"""Which models take images, and what a model that does not is sent instead.

Images reach a model from two places: a user's prompt (`UserMessage` parts) and a tool result
(`ToolResultMessage.images`, from `read_file` of an image file). This module decides the second:
an image from a tool goes only to a model that takes images; any other model gets the tool's
text (which already names the image's type, size and dimensions) with a note that the image
was not shown (`without_tool_images`).

Who takes images (`VisionSupport`): the config file's `images` key (per model, else per
provider) when set; else Anthropic and the public OpenAI API do; else an OpenAI-compatible
server is asked once, at the first request that carries a tool's image: llama.cpp's
`GET {root}/props` reports `modalities.vision` (true when the server was started with a
vision projector). The probe runs under the turn signal and within `DISCOVERY_TIMEOUT_S`;
no usable answer means "no images". The answer is kept per provider (one provider serves
one model), so a server that hangs costs one timeout.
See docs/rfc/implemented/feature/2026-12-02-images-from-read-file.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.models.base import ModelRequest, ToolResultMessage
from acp_server.models.window import DISCOVERY_TIMEOUT_S, get_json

if TYPE_CHECKING:
    import httpx

__all__ = [
    "IMAGE_NOT_SENT",
    "VisionSupport",
    "has_tool_images",
    "vision_from_props",
    "without_tool_images",
]

log = logging.getLogger(__name__)

IMAGE_NOT_SENT = "[the image itself is not shown: this model does not take images]"
"""Added to a tool result whose image a model without image input is not sent."""


def has_tool_images(request: ModelRequest) -> bool:
    """Whether any tool result of `request` carries an image."""
    return any(isinstance(item, ToolResultMessage) and item.images for item in request.messages)


def without_tool_images(request: ModelRequest) -> ModelRequest:
    """`request` with every tool result's images left out, each such result saying so."""
    messages = [
        ToolResultMessage(
            call_id=item.call_id,
            output=f"{item.output}\n{IMAGE_NOT_SENT}",
            is_error=item.is_error,
        )
        if isinstance(item, ToolResultMessage) and item.images
        else item
        for item in request.messages
    ]
    return msgspec.structs.replace(request, messages=messages)


def vision_from_props(body: Any) -> bool | None:
    """`modalities.vision` of a llama.cpp `/props` answer: True or False when it says, None
    when the answer does not hold it (not llama.cpp, or an older one)."""
    if not isinstance(body, dict):
        return None
    modalities = body.get("modalities")
    if not isinstance(modalities, dict):
        return None
    vision = modalities.get("vision")
    return vision if isinstance(vision, bool) else None


class VisionSupport:
    """Whether one provider's model takes images: configured, known, or asked once."""

    __slots__ = ("_known", "_label")

    def __init__(self, label: str, known: bool | None) -> None:
        """`known`: the config file's answer, else the provider's own (Anthropic, public
        OpenAI); None: ask the server (`/props`) the first time it matters."""
        self._label = label
        self._known = known

    @property
    def known(self) -> bool | None:
        """The answer when it is known without asking (or was asked already)."""
        return self._known

    async def get(
        self,
        client: httpx.AsyncClient,
        root_url: str,
        headers: Mapping[str, str],
        signal: TurnSignal,
    ) -> bool:
        """The answer, asking `GET {root_url}/props` the first time (see the module
        docstring). Raises TurnAborted when the signal aborts during the probe."""
        if self._known is not None:
            return self._known
        said: bool | None = None
        with signal.linked_scope(), anyio.move_on_after(DISCOVERY_TIMEOUT_S):
            said = vision_from_props(await get_json(client, f"{root_url}/props", headers))
        signal.raise_if_aborted()  # an aborted probe says nothing: ask again next time
        self._known = bool(said)
        log.info(
            "%s: %s images (%s)",
            self._label,
            "takes" if self._known else "does not take",
            "llama.cpp /props modalities.vision" if said is not None else "not reported",
        )
        return self._known
