"""The client's own system prompt (ACP `systemPrompt`) in the model's system message.

`append` adds the client's text right after our instructions; `override` puts it in their
place. Either way the environment block and the project's instruction files (`AGENTS.md`,
acp_server/agent/instructions.py) follow: they describe the workspace and come from the user
and the project, not from us (see
docs/rfc/implemented/feature/2026-12-01-client-system-prompt.md). The text is capped like the
instruction files, with a note saying what was cut.
"""

from __future__ import annotations

from typing import Literal

from acp_server.cancellation import TurnSignal

from .instructions import DEFAULT_MAX_BYTES

ClientPromptMode = Literal["append", "override"]


def cap_client_prompt(text: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """`text` within `max_bytes` (UTF-8), followed by a note when it was cut."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    kept = data[:max_bytes].decode("utf-8", errors="ignore")  # a cut may split a character
    return (
        f"{kept}\n(cut: the client's system prompt has {len(data):,} bytes and only the first "
        f"{len(kept.encode('utf-8')):,} fit the {max_bytes:,}-byte budget for it)"
    )


class ClientPrompt:
    """The system-prompt seam's first listener: the session's client prompt, if it has one.

    Install `assemble` before the project instructions' on the system-prompt seam: the loop
    starts the parts with our instructions, which `override` replaces.
    """

    def __init__(self) -> None:
        self.mode: ClientPromptMode | None = None
        self.text = ""

    def set(self, mode: ClientPromptMode, text: str) -> None:
        """Use this prompt from the next model request on (`text` already capped)."""
        self.mode, self.text = mode, text

    async def assemble(self, parts: list[str], signal: TurnSignal) -> None:
        if self.mode == "override" and parts:
            parts[0] = self.text
        elif self.mode == "append":
            parts.append(self.text)
