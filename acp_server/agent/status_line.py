"""The status line of the session's background commands, on every model request while one runs
(or ended and the model was not told yet): one line per item, with its new lines, so the model
follows up without polling in a loop.

It is a request-config listener: it sets `ModelRequest.status`, which the providers send after
the conversation (never recorded, kept out of prompt caching). At most the registry's limit of
items, each line cut to a short command. See
docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.models.base import ModelRequest
from acp_server.process.background import BackgroundItem, BackgroundItems

__all__ = ["background_status", "status_of"]

HEADING = "Background commands (bash_output reads one, bash_stop stops one):"

COMMAND_CHARS = 60
"""How much of an item's command its line shows."""


def status_of(items: BackgroundItems) -> str | None:
    """The note for the items that run or whose end the model was not told; None if none."""
    lines = [_line(item) for item in items.items if item.running or not item.end_told]
    return "\n".join([HEADING, *lines]) if lines else None


def _line(item: BackgroundItem) -> str:
    command = " ".join(item.command.split())
    if len(command) > COMMAND_CHARS:
        command = command[: COMMAND_CHARS - 1] + "…"
    state = "running" if item.end is None else item.end.describe()
    new = item.output.new_lines
    news = f", {new} new line{'' if new == 1 else 's'}" if new else ""
    return f"- {item.name} `{command}`: {state}{news}"


def background_status(
    items: BackgroundItems,
) -> Callable[[ModelRequest, TurnSignal], Awaitable[ModelRequest]]:
    """A request-config listener putting the items' status on each request (see above)."""

    async def configure(request: ModelRequest, signal: TurnSignal) -> ModelRequest:
        status = status_of(items)
        if status is None:
            return request
        return msgspec.structs.replace(request, status=status)

    return configure
