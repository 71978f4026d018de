"""The checks, through the real `acp-server` driven by the official ACP SDK client.

(a) a streamed answer ends `end_turn`; (b) a long answer cancelled after its first chunks ends
`cancelled`, with no chunk after the response and the HTTP stream to llama.cpp closed; (c) a
task that needs a tool: the answer must carry a number that only the workspace file holds.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from acp import spawn_agent_process, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from e2e_local.environment import Failure, info, step
from e2e_local.servers import MODEL_ALIAS, busy_slots, connections_to

SERVER = Path(sys.executable).with_name("acp-server")
ANSWER_TIMEOUT_S = 120.0
TOOL_TASK_TIMEOUT_S = 300.0
CANCEL_CHUNKS = 3
QUIET_AFTER_S = 1.0
SLOTS_IDLE_S = 15.0
HELLO_PROMPT = "Say hello in five words."
STORY_PROMPT = "Write a very long story about a lighthouse keeper. Do not use any tool."
SECRET = "7481"
NOTES = f"The number is {SECRET}.\n"
FULL_WINDOW = 16384  # > acp_server.agent.compact_prompt.COMPACT_WINDOW
TOOL_PROMPT = "Read the file notes.txt in the workspace and tell me the number in it."
NAME = re.compile(r'"name"\s*:\s*"[A-Za-z_][A-Za-z0-9_]*"')  # a text call's name, complete


def from_agent(update: Any) -> bool:
    """A chunk acp-server marked as its own note (`_meta["acp-server"].origin` "agent")."""
    meta = getattr(update, "field_meta", None) or {}
    return isinstance(meta, dict) and (meta.get("acp-server") or {}).get("origin") == "agent"


@dataclass
class Client:
    """A minimal ACP client: timestamps every session update; answers a permission request
    with its first "allow" option when `allow` is set, else refuses it."""

    allow: bool = False
    agent_pid: int | None = None
    updates: list[tuple[float, Any]] = field(default_factory=list)
    permissions: list[str] = field(default_factory=list)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def notify(self) -> None:
        """Wake whoever waits in `wait_until`."""
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            await self.changed.wait()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((time.monotonic(), update))
        self.notify()

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **_: Any
    ) -> Any:
        self.permissions.append(str(getattr(tool_call, "title", "") or tool_call))
        allowing = [o for o in options if o.kind.startswith("allow")] if self.allow else []
        if allowing:
            return RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=allowing[0].option_id)
            )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def message_chunks(self, since: int = 0) -> list[tuple[float, str]]:
        return [
            (at, getattr(update.content, "text", "") or "")
            for at, update in self.updates[since:]
            if update.session_update == "agent_message_chunk"
        ]

    def final_answer(self, since: int = 0) -> str:
        """The model's text after the last tool call: a call written as text, and the agent's
        own marked notes, are not the answer."""
        start = since
        for index in range(since, len(self.updates)):
            if self.updates[index][1].session_update in ("tool_call", "tool_call_update"):
                start = index + 1
        return "".join(
            getattr(update.content, "text", "") or ""
            for _, update in self.updates[start:]
            if update.session_update == "agent_message_chunk" and not from_agent(update)
        )

    def tool_calls(self, since: int = 0) -> dict[str, dict[str, Any]]:
        """Each tool call's latest state: title, kind, status and its text content; its first
        status; how long after the last message chunk before it the client first saw it; and,
        for a call written as text, how long after the chunk that completed its `"name"` the
        client saw it (`name_to_frame_ms`) and whether message chunks still followed, i.e. it
        was shown while the model was still writing it (`while_written`)."""
        calls: dict[str, dict[str, Any]] = {}
        last_chunk: float | None = None
        text = ""  # the model's text since the last new call: where the next name shows
        name_at: float | None = None
        newest: str | None = None
        for at, update in self.updates[since:]:
            if update.session_update == "agent_message_chunk" and not from_agent(update):
                last_chunk = at
                text += getattr(update.content, "text", "") or ""
                if name_at is None and NAME.search(text):
                    name_at = at
                if newest is not None and calls[newest].get("status") in (None, "pending"):
                    calls[newest]["while_written"] = True
            if update.session_update not in ("tool_call", "tool_call_update"):
                continue
            if update.tool_call_id not in calls:
                calls[update.tool_call_id] = {
                    "content": "",
                    "first_status": getattr(update, "status", None),
                    "seen_ms_after_last_chunk": None
                    if last_chunk is None
                    else round((at - last_chunk) * 1000, 1),
                    "name_to_frame_ms": None
                    if name_at is None
                    else round((at - name_at) * 1000, 1),
                    "while_written": False,
                }
                newest, text, name_at = update.tool_call_id, "", None
            call = calls[update.tool_call_id]
            for name in ("title", "kind", "status", "raw_input"):
                if getattr(update, name, None) is not None:
                    call[name] = getattr(update, name)
            for item in getattr(update, "content", None) or ():
                text_part = getattr(getattr(item, "content", None), "text", None)
                if text_part:
                    call["content"] += text_part
        return calls


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """anyio.fail_after with a message: `what` did not happen in time."""
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError:
        raise Failure(f"{what} did not happen within {seconds:.0f} s") from None


@asynccontextmanager
async def agent(
    client: Client, port: int, scratch: Path, *extra: str, config: str = "config"
) -> AsyncIterator[Any]:
    """The real acp-server on `openai:qwen` at 127.0.0.1:port, initialized; its pid is kept in
    `client.agent_pid`. Its config file is `scratch/<config>/acp-server/config.toml`."""
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "XDG_CONFIG_HOME": str(scratch / config),  # no user config file in the way
    }
    args = ["--model", f"openai:{MODEL_ALIAS}", "--data-dir", str(scratch / "data"), *extra]
    step(f"acp-server: {SERVER} {' '.join(args)}")
    info(f"OPENAI_BASE_URL={env['OPENAI_BASE_URL']}")
    # A partial client: only the callbacks acp-server makes in this run (as in tests/support).
    sdk_client: Any = client
    async with spawn_agent_process(
        sdk_client, str(SERVER), *args, env=env, transport_kwargs={"stderr": None}
    ) as (conn, process):
        client.agent_pid = process.pid
        started = time.monotonic()
        init = await conn.initialize(protocol_version=1)
        info(f"initialize: protocolVersion {init.protocol_version} ({ms_since(started)})")
        yield conn


def ms_since(started: float) -> str:
    return f"{(time.monotonic() - started) * 1000:.0f} ms"


async def streamed_answer(conn: Any, client: Client, cwd: Path) -> None:
    step(f"prompt (a): {HELLO_PROMPT!r}")
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    first = len(client.updates)
    started = time.monotonic()
    with deadline(ANSWER_TIMEOUT_S, "prompt (a): the response"):
        response = await conn.prompt(
            session_id=session.session_id, prompt=[text_block(HELLO_PROMPT)]
        )
    finished = time.monotonic()
    chunks = client.message_chunks(first)
    answer = "".join(text for _, text in chunks)
    info(f"stopReason: {response.stop_reason}")
    info(f"answer ({len(chunks)} chunks): {answer!r}")
    if chunks:
        info(
            f"first chunk after {(chunks[0][0] - started) * 1000:.0f} ms, "
            f"response after {(finished - started) * 1000:.0f} ms"
        )
    if response.stop_reason != "end_turn":
        raise Failure(f"prompt (a): stopReason {response.stop_reason!r}, expected 'end_turn'")
    if not answer.strip():
        raise Failure("prompt (a): no agent_message_chunk with text arrived")


def children_of(pid: int | None) -> list[int]:
    """The live processes whose parent is `pid` (read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if pid is not None and int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


async def cancelled_stream(conn: Any, client: Client, cwd: Path, port: int) -> dict[str, Any]:
    step(f"prompt (b): {STORY_PROMPT!r}, cancelled after {CANCEL_CHUNKS} chunks")
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    first = len(client.updates)
    outcome: dict[str, Any] = {}

    async def story() -> None:
        outcome["response"] = await conn.prompt(
            session_id=session.session_id, prompt=[text_block(STORY_PROMPT)]
        )
        outcome["at"] = time.monotonic()
        client.notify()

    async with anyio.create_task_group() as tg:
        tg.start_soon(story)
        with deadline(ANSWER_TIMEOUT_S, f"prompt (b): {CANCEL_CHUNKS} message chunks"):
            await client.wait_until(
                lambda: len(client.message_chunks(first)) >= CANCEL_CHUNKS or "at" in outcome
            )
        if "at" in outcome:
            raise Failure(
                f"prompt (b) ended ({outcome['response'].stop_reason}) before "
                f"{CANCEL_CHUNKS} chunks arrived: nothing to cancel"
            )
        streams = connections_to(port)
        cancelled_at = time.monotonic()
        await conn.cancel(session_id=session.session_id)
        with deadline(30, "prompt (b): the response after session/cancel"):
            await client.wait_until(lambda: "at" in outcome)
    latency_ms = (outcome["at"] - cancelled_at) * 1000
    stop_reason = outcome["response"].stop_reason
    before_cancel = [c for c in client.message_chunks(first) if c[0] <= cancelled_at]
    streamed = "".join(text for _, text in before_cancel)
    info(f"streamed before cancel ({len(before_cancel)} chunks): {streamed!r}")
    info(f"stopReason: {stop_reason}; session/cancel -> response: {latency_ms:.1f} ms")

    # Was the HTTP stream to llama.cpp closed? Its TCP connection (an idle pooled one may
    # stay open), then the server's log.
    closed_ms: float | None = None
    closed_ports: list[int] = []
    while streams and time.monotonic() - outcome["at"] < 2.0:
        closed_ports = sorted(set(streams) - set(connections_to(port) or ()))
        if closed_ports:
            closed_ms = (time.monotonic() - cancelled_at) * 1000
            break
        await anyio.sleep(0.001)
    await anyio.sleep(QUIET_AFTER_S)
    all_chunks = client.message_chunks(first)
    in_flight = [c for c in all_chunks if cancelled_at < c[0] <= outcome["at"]]
    late = [c for c in all_chunks if c[0] > outcome["at"]]
    info(f"chunks between cancel and response: {len(in_flight)}")
    info(f"chunks after the response (watched {QUIET_AFTER_S:.0f} s): {len(late)}")
    if streams is None:
        info("TCP connections: /proc/net/tcp not readable, not checked")
    else:
        ports = ", ".join(str(p) for p in streams) or "none"
        info(f"TCP connections to llama.cpp at cancel: client port(s) {ports}")
        if closed_ms is not None:
            closed = ", ".join(str(p) for p in closed_ports)
            info(f"connection from port {closed} closed {closed_ms:.1f} ms after cancel")
    # llama-server notices a closed connection at its next token: wait for its slots to idle.
    busy = busy_slots(port)
    while busy and time.monotonic() - cancelled_at < SLOTS_IDLE_S:
        await anyio.sleep(0.05)
        busy = busy_slots(port)
    idle_ms = (time.monotonic() - cancelled_at) * 1000
    children = children_of(client.agent_pid)
    info(
        f"llama-server slots still processing: {busy} ({idle_ms:.0f} ms after cancel); "
        f"acp-server child processes: {children}"
    )
    if stop_reason != "cancelled":
        raise Failure(f"prompt (b): stopReason {stop_reason!r}, expected 'cancelled'")
    if late:
        raise Failure(f"prompt (b): {len(late)} agent_message_chunk(s) after the response")
    if streams is not None and closed_ms is None:
        raise Failure("prompt (b): no connection to llama.cpp closed within 2 s of cancel")
    if busy:
        raise Failure(f"prompt (b): llama-server still processes {busy} request(s)")
    if children:
        raise Failure(f"prompt (b): acp-server still has child processes {children}")
    return {
        "stop_reason": stop_reason,
        "cancel_to_response_ms": round(latency_ms, 1),
        "connection_closed_ms": None if closed_ms is None else round(closed_ms, 1),
        "open_requests": busy,
        "slots_idle_after_ms": round(idle_ms),
        "surviving_processes": len(children),
        "chunks_after_response": len(late),
    }


async def tool_task(conn: Any, client: Client, workspace: Path) -> dict[str, Any]:
    """One prompt that needs a tool; permissions are answered "allow"."""
    (workspace / "notes.txt").write_text(NOTES)
    step(f"prompt (c): {TOOL_PROMPT!r} (notes.txt holds {NOTES.strip()!r})")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    first = len(client.updates)
    started = time.monotonic()
    with deadline(TOOL_TASK_TIMEOUT_S, "prompt (c): the response"):
        response = await conn.prompt(
            session_id=session.session_id, prompt=[text_block(TOOL_PROMPT)]
        )
    took = time.monotonic() - started
    calls = client.tool_calls(first)
    for number, call in enumerate(calls.values(), 1):
        content = call["content"].strip().replace("\n", " | ")[:160]
        info(
            f"tool call {number}: {call.get('title')!r} kind={call.get('kind')} "
            f"status={call.get('status')} input={call.get('raw_input')!r} result={content!r}; "
            f"first {call.get('first_status')}, {call.get('name_to_frame_ms')} ms after the chunk "
            f"that completed its name, while written: {call.get('while_written')}"
        )
    for title in client.permissions:
        info(f"permission asked and allowed: {title!r}")
    answer = client.final_answer(first)  # a call's JSON holding the number is not an answer
    info(f"stopReason: {response.stop_reason} after {took:.1f} s, {len(calls)} tool call(s)")
    info(f"answer: {answer.strip()!r}")
    read = [c for c in calls.values() if c.get("status") == "completed" and SECRET in c["content"]]
    failure = None
    if not calls:
        failure = f"the model called no tool (stopReason {response.stop_reason})"
    elif not read:
        failure = (
            f"no tool call completed with the file's number {SECRET} in its result "
            f"({len(calls)} tool call(s); stopReason {response.stop_reason})"
        )
    elif SECRET not in answer:
        failure = f"the tool read {SECRET} but the answer does not say it"
    elif response.stop_reason != "end_turn":
        failure = f"stopReason {response.stop_reason!r}, expected 'end_turn'"
    if failure is not None:
        info(f"FAILED: prompt (c): {failure}")
    return {
        "stop_reason": str(response.stop_reason),
        "seconds": round(took, 1),
        "tool_calls": [
            {
                "title": c.get("title"),
                "status": c.get("status"),
                "input": c.get("raw_input"),
                "first_status": c.get("first_status"),
                "name_to_frame_ms": c.get("name_to_frame_ms"),
                "while_written": c.get("while_written"),
            }
            for c in calls.values()
        ],
        "answer": answer.strip()[-600:],
        "failure": failure,
    }


def write_config(
    scratch: Path, *, full_prompt: bool, extra: str = "", config: str = "config"
) -> None:
    """The config file of the run's acp-server (`XDG_CONFIG_HOME` is `scratch/config`): with
    `full_prompt`, the window is declared as 16k, so acp-server sends its full system prompt and
    tool list; else nothing is set and llama-server's 8k window (`/props`) picks the compact
    variant."""
    folder = scratch / config / "acp-server"
    folder.mkdir(parents=True, exist_ok=True)
    window = f'[providers.openai.models."{MODEL_ALIAS}"]\ncontext_window = {FULL_WINDOW}\n'
    (folder / "config.toml").write_text(extra + (window if full_prompt else ""))
