"""`bash_output` and `bash_stop`: the model's hands on the session's background commands
(`bash` with `background: true` starts them; acp_server/process/background.py runs them).

`bash_output` returns what an item printed since the last read, at most the tool budget's
bytes, with a note of what the item's bounded buffer dropped before the read got to it and of
what is left for the next read. `bash_stop` stops an item the way every call ends and returns
the same. Stopping only undoes what the session itself started, which the user allowed when it
started, so the permission policy lets it through without a question (`stops_own_work`). See
docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.process.background import BackgroundItem, BackgroundItems
from acp_server.tools.base import ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.budget import ToolBudget
from acp_server.tools.builtin._common import BuiltinTool, failed, plural, shorten, str_arg
from acp_server.tools.workspace import PathRoots


class ItemArgs(msgspec.Struct, forbid_unknown_fields=True):
    id: Annotated[
        str,
        msgspec.Meta(description="The background command's id, as `bash` named it (`bg_1`)."),
    ]


def item_state(item: BackgroundItem) -> str:
    """`bg_1 (`cmd`) is running.` or how it ended."""
    where = f"{item.name} (`{shorten(item.command)}`)"
    return f"{where} is running." if item.end is None else f"{where} {item.end.describe()}."


def read_out(item: BackgroundItem, max_bytes: int) -> str:
    """The item's state, then its new output (at most `max_bytes`), with what was cut."""
    read = item.output.read(max_bytes)
    item.tell_end()
    parts = [item_state(item)]
    if read.dropped:
        kept = item.output.limit // 1024
        parts.append(
            f"[{read.dropped} bytes ({plural(read.dropped_lines, 'line')}) it printed before "
            f"this were dropped: only its last {kept} KiB are kept]"
        )
    parts.append(read.text.rstrip("\n") if read.text else "(no new output)")
    if read.left:
        parts.append(f"[{read.left} more bytes wait: call bash_output again for them]")
    return "\n".join(parts)


class _ItemTool(BuiltinTool[ItemArgs]):
    args_type = ItemArgs
    verb: str

    def __init__(
        self,
        path_roots: PathRoots,
        items: BackgroundItems,
        *,
        max_bytes: int = ToolBudget().body_bytes,
    ) -> None:
        super().__init__(path_roots)
        self.items = items
        self.max_bytes = max_bytes

    def title(self, arguments: Mapping[str, Any]) -> str:
        name = str_arg(arguments, "id")
        item = self.items.get(name) if name else None
        if item is None:
            return f"{self.verb} {name or 'background command'}"
        return f"{self.verb} {item.name} (`{shorten(item.command, 40)}`)"

    def find(self, name: str) -> BackgroundItem | ToolOutput:
        item = self.items.get(name)
        if item is not None:
            return item
        known = ", ".join(item.name for item in self.items.items) or "none"
        return failed(
            f"no background command {name!r} in this session (its background commands: "
            f"{known}); `bash` with `background: true` starts one"
        )


class BashOutput(_ItemTool):
    name = "bash_output"
    kind: ToolKind = "read"
    verb = "Read"
    description = (
        "Read what a background command (started by bash with `background: true`) printed "
        "since you last read it, and whether it still runs. Each of your requests lists the "
        "background commands with their new lines, so read when there is something to read."
    )

    async def act(self, args: ItemArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        item = self.find(args.id)
        if isinstance(item, ToolOutput):
            return item
        return ToolOutput(read_out(item, self.max_bytes))


class BashStop(_ItemTool):
    name = "bash_stop"
    kind: ToolKind = "execute"
    verb = "Stop"
    stops_own_work: Literal[True] = True
    description = (
        "Stop a background command (started by bash with `background: true`) and every process "
        "it started, and return what it printed since you last read it."
    )

    async def act(self, args: ItemArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        item = self.find(args.id)
        if isinstance(item, ToolOutput):
            return item
        if item.running:
            # Not under the turn's signal: a stop, once begun, runs to the join (it is
            # bounded by the grace period and the join), so a cancel cannot leave half of it.
            await self.items.stop(item)
        signal.raise_if_aborted()
        return ToolOutput(read_out(item, self.max_bytes))
