"""A tool call for tests that run a tool directly, without an agent: what the tool showed on it
(progress texts, terminals) is kept."""

from __future__ import annotations


class RecordedCall:
    """A `ToolCallContext` that keeps what the tool showed on its call."""

    def __init__(self, call_id: str = "call_test") -> None:
        self.call_id = call_id
        self.progress_texts: list[str] = []
        self.terminals: list[str] = []

    async def progress(self, text: str) -> None:
        self.progress_texts.append(text)

    async def terminal(self, terminal_id: str) -> None:
        self.terminals.append(terminal_id)


def a_call(call_id: str = "call_test") -> RecordedCall:
    """A fresh recorded call."""
    return RecordedCall(call_id)
