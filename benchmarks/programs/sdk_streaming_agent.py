"""A streaming ACP agent on the official ACP Python SDK: the baseline of `benchmarks cancel`.

On `session/prompt` it streams `agent_message_chunk` updates ("tick "), pausing 1 ms before
each, until `session/cancel` arrives for that session; then the prompt answers
`{"stopReason": "cancelled"}`. It mirrors what acp-server does for the benchmark's script
response `[{"text": "tick ", "repeat": 1000000, "delay_ms": 1}]`.

Written the way the SDK's examples are: an `acp.Agent` run by `acp.run_agent` over stdio, one
`asyncio.Event` per session, set by `cancel` and awaited (with the 1 ms tick as its timeout)
between chunks, so a cancel ends the pause at once rather than after it.

Run: `python benchmarks/programs/sdk_streaming_agent.py` (in a venv with agent-client-protocol).
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import uuid4

from acp import (
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    update_agent_message_text,
)
from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    AudioContentBlock,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    McpServerStdio,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
)

TICK_S = 0.001
TICK_TEXT = "tick "


class StreamingAgent(Agent):
    _conn: Client

    def __init__(self) -> None:
        self._cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio]
        | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session_id = uuid4().hex
        self._cancelled[session_id] = asyncio.Event()
        return NewSessionResponse(session_id=session_id)

    async def prompt(
        self,
        session_id: str,
        prompt: list[
            TextContentBlock
            | ImageContentBlock
            | AudioContentBlock
            | ResourceContentBlock
            | EmbeddedResourceContentBlock
        ],
        **kwargs: Any,
    ) -> PromptResponse:
        cancelled = self._cancelled.get(session_id)
        if cancelled is None:
            raise RequestError.invalid_params({"sessionId": session_id, "details": "unknown"})
        cancelled.clear()  # a cancel only ends the turn it arrived during
        while True:
            try:
                await asyncio.wait_for(cancelled.wait(), TICK_S)
            except TimeoutError:
                await self._conn.session_update(
                    session_id=session_id, update=update_agent_message_text(TICK_TEXT)
                )
            else:
                return PromptResponse(stop_reason="cancelled")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        cancelled = self._cancelled.get(session_id)
        if cancelled is not None:
            cancelled.set()


async def main() -> None:
    # Like the SDK's examples it implements only the methods this benchmark calls; the others
    # keep the Agent protocol's bodies, hence abstract to mypy.
    await run_agent(StreamingAgent())  # type: ignore[abstract]


if __name__ == "__main__":
    asyncio.run(main())
