"""`systemPrompt` on `session/new`, `load`, `resume` and `fork`: checked before the session is
created or opened (an unsupported mode, an empty or non-text content: -32602, nothing created),
then journaled with the session and given to its agent. A session keeps its prompt across
load, resume and fork unless the client sends another (see
docs/rfc/implemented/feature/2026-12-01-client-system-prompt.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from msgspec import UNSET, UnsetType

from acp_protocol.content import TextContent
from acp_protocol.system_prompt import SystemPrompt

from .errors import invalid_params

if TYPE_CHECKING:
    from acp_server.agent import ClientPromptMode

MODES: tuple[ClientPromptMode, ...] = ("append", "override")

Requested: TypeAlias = "tuple[ClientPromptMode, str]"
"""A checked client prompt: its mode and its text (cut to its budget when it is applied)."""


def requested_prompt(prompt: SystemPrompt | UnsetType | None) -> Requested | None:
    """A request's `systemPrompt`, checked; None when it has none (or `null`)."""
    if prompt is UNSET or prompt is None:
        return None
    mode = next((m for m in MODES if m == prompt.mode), None)
    if mode is None:
        raise invalid_params(
            f"systemPrompt.mode {prompt.mode!r} is not supported: use 'append' or 'override'",
        )
    if not prompt.content:
        raise invalid_params("systemPrompt.content is empty")
    texts: list[str] = []
    for index, block in enumerate(prompt.content):
        if not isinstance(block, TextContent):
            raise invalid_params(
                f"systemPrompt.content[{index}] is a {block.__struct_config__.tag!r} block; only "
                "text blocks "
                "are accepted",
            )
        texts.append(block.text)
    return mode, "\n\n".join(texts)
