"""Commands a v2 session runs, shown on v2's display-only terminal surface.

v2 has no client terminals: every command runs in our process runner (with the same roots,
sandbox and permissions as on v1), and the client is shown it on a terminal the agent owns. The
terminal's id is the tool call's (unique in the session, never reused); its first update names
the command and the absolute cwd; the output is sent as a replacement snapshot of its tail, at
most one per progress interval of the tool (bounded in size and rate, where appended chunks
would be neither); the last update carries the exit status. Every byte is the command's text
with control and bidirectional characters escaped (`printable`), as on v1: a command must not
drive the user's terminal emulator (docs/security.md).
"""

from __future__ import annotations

import base64

from msgspec import UNSET

from acp_protocol.client import TerminalExitStatus
from acp_protocol.v2.tool_call import TerminalOutput, TerminalUpdate
from acp_server.printable import printable
from acp_server.tools.base import ProcessExit

__all__ = ["TAIL_CHARS", "DisplayTerminals"]

TAIL_CHARS = 4096
"""How much of the end of a command's final text its terminal keeps (as its live tail does)."""


def _snapshot(text: str) -> TerminalOutput:
    return TerminalOutput(data=base64.b64encode(text.encode()).decode())


class DisplayTerminals:
    """The display terminals of one session's running commands, by tool call id."""

    def __init__(self, cwd: str) -> None:
        self._cwd = cwd
        self._open: set[str] = set()

    def is_open(self, call_id: str) -> bool:
        return call_id in self._open

    def opened(self, call_id: str, command: str) -> TerminalUpdate:
        """The command starts: its terminal, with the command and where it runs."""
        self._open.add(call_id)
        return TerminalUpdate(terminal_id=call_id, command=printable(command), cwd=self._cwd)

    def output(self, call_id: str, tail: str) -> TerminalUpdate:
        """The latest tail of the output (already escaped by the tool's live output)."""
        return TerminalUpdate(terminal_id=call_id, output=_snapshot(tail))

    def exited(self, call_id: str, text: str, process_exit: ProcessExit | None) -> TerminalUpdate:
        """The command ended: the tail of its final text and how it exited (a stop by the
        turn's cancel has no code: the object alone says it exited)."""
        self._open.discard(call_id)
        status = TerminalExitStatus()
        if process_exit is not None:
            status = TerminalExitStatus(
                exit_code=UNSET if process_exit.exit_code is None else process_exit.exit_code,
                signal=UNSET if process_exit.signal is None else process_exit.signal,
            )
        return TerminalUpdate(
            terminal_id=call_id,
            output=_snapshot(printable(text[-TAIL_CHARS:])),
            exit_status=status,
        )
