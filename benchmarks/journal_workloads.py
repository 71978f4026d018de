"""The load mode's workloads in this process: a synthetic journal written with the
JournalStore API, loading it back, and turns driven through the agent with or without one.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.measure import Result

LOAD_SESSION_ID = "sess_bench"
# ~200 characters each: what one assistant message and one tool output of the journal say.
BENCH_REPLY = (
    "The loader reads the whole file in one call, decodes every line against the record union,"
    " truncates a torn last line, closes turns a crash left open, and only then replays the"
    " conversation to the client."
)
BENCH_OUTPUT = (
    "def parse(data: bytes) -> list[Record]:\n"
    "    lines = data.split(b'\\n')\n"
    "    header = decode_header(lines[0])\n"
    "    return [decode(line) for line in lines[1:] if line]  # strict: no unknown types\n"
)


def bench_turn(n: int) -> list[Any]:
    """Turn n of the synthetic journal: even turns read a file (10 records), odd ones only
    answer (6 records); so 16 records per pair of turns."""
    from acp_server.session import records as rec

    turn_id, at = f"turn_{n:016x}", rec.utc_now()
    path = f"src/module_{n}.py"
    prompt = f"Prompt {n}: look at {path} and explain how its parser handles a torn line."
    records: list[Any] = [
        rec.TurnStart(turn_id=turn_id, at=at),
        rec.UserMessage(
            message_id=f"msg_{n:014x}u0",
            content=[rec.TextPart(text=prompt)],
            origin="prompt",
            turn_id=turn_id,
            at=at,
        ),
        rec.StepStart(turn_id=turn_id, step=1, at=at),
    ]
    reply: list[rec.TextPart | rec.ThoughtPart] = [rec.TextPart(text=f"[{n}] {BENCH_REPLY}")]
    if n % 2:
        records += [
            rec.AssistantMessage(turn_id=turn_id, message_id=f"msg_{n:014x}a1", parts=reply, at=at),
            rec.StepEnd(turn_id=turn_id, step=1, finish="stop", at=at),
        ]
    else:
        call = rec.ToolCallRecord(call_id=f"call_{n}", name="read_file", arguments={"path": path})
        records += [
            rec.AssistantMessage(
                turn_id=turn_id,
                message_id=f"msg_{n:014x}a1",
                parts=[rec.TextPart(text=f"Reading {path} first.")],
                tool_calls=[call],
                at=at,
            ),
            rec.ToolResult(
                turn_id=turn_id,
                call_id=call.call_id,
                status="completed",
                output=BENCH_OUTPUT,
                title=f"Read {path}",
                kind="read",
                at=at,
            ),
            rec.StepEnd(turn_id=turn_id, step=1, finish="tool_calls", at=at),
            rec.StepStart(turn_id=turn_id, step=2, at=at),
            rec.AssistantMessage(turn_id=turn_id, message_id=f"msg_{n:014x}a2", parts=reply, at=at),
            rec.StepEnd(turn_id=turn_id, step=2, finish="stop", at=at),
        ]
    records.append(rec.TurnEndRecord(turn_id=turn_id, outcome=rec.Completed(), at=at))
    return records


def build_journal(data_dir: Path, count: int, cwd: str, session_id: str) -> Result:
    """Write a session's journal with the JournalStore API: whole turns until `count` records
    (exactly `count` when it is a multiple of 16; 0 leaves just the header)."""
    from acp_server.session.journal import JournalHeader, JournalStore
    from acp_server.session.records import utc_now

    store = JournalStore(data_dir)
    header = JournalHeader(session_id=session_id, cwd=cwd, created_at=utc_now())
    written = turns = 0
    with store.create(header) as journal:
        while written < count:
            for record in bench_turn(turns):
                journal.append(record)
                written += 1
            turns += 1
    return {
        "records": written,
        "turns": turns,
        "bytes": store.path_for(session_id).stat().st_size,
    }


def load_in_process(data_dir: Path, runs: int) -> Result:
    """Context for the wire figure: JournalStore.open (read, parse, lock) and replay_updates
    (records -> updates) alone, in this process; and how many updates a load must replay."""
    from acp_server.acp.replay import replay_updates
    from acp_server.session.journal import JournalStore

    open_ms, replay_ms, updates = [], [], 0
    for _ in range(runs + 1):  # the first is a warm-up
        t0 = time.perf_counter()
        loaded = JournalStore(data_dir).open(LOAD_SESSION_ID)
        t1 = time.perf_counter()
        updates = len(replay_updates(loaded.records))
        t2 = time.perf_counter()
        loaded.journal.close()
        if loaded.repaired:
            raise RuntimeError("the benchmark journal needed repair; it should be clean")
        open_ms.append((t1 - t0) * 1000)
        replay_ms.append((t2 - t1) * 1000)
    return {
        "open_median_ms": statistics.median(open_ms[1:]),
        "replay_updates_median_ms": statistics.median(replay_ms[1:]),
        "expected_updates": updates,
    }


async def agent_turns_once(
    script: Path, journal_dir: Path | None, turns: int, *, flush: bool = True
) -> Result:
    """`turns` follow-ups through acp_server.agent.agent.spawn_agent in this process: on a
    SessionLog alone (journal_dir None), or wired to a real Journal under journal_dir the way
    acp_server/acp/wiring.py `SessionWiring.start` does (on_append=journal.append, and unless
    `flush` is False durability_flush=journal.flush). Timed from the first follow-up to the
    last ticket."""
    import secrets

    import anyio

    from acp_server.agent.agent import spawn_agent
    from acp_server.agent.loop import AgentConfig
    from acp_server.models.spec import load_model
    from acp_server.session import records as rec
    from acp_server.session.journal import JournalHeader, JournalStore
    from acp_server.session.log import SessionLog

    session_id = f"sess_inproc_{secrets.token_hex(6)}"
    session = SessionLog(session_id)
    journal = None
    if journal_dir is not None:
        header = JournalHeader(
            session_id=session_id, cwd=str(journal_dir), created_at=rec.utc_now()
        )
        journal = JournalStore(journal_dir).create(header)
        session.on_append(journal.append)
    config = AgentConfig(model=load_model(f"script:{script}"))
    outcomes = set()
    try:
        async with anyio.create_task_group() as task_group:
            handle = spawn_agent(
                session,
                config,
                task_group,
                durability_flush=journal.flush if journal is not None and flush else None,
            )
            t0 = time.perf_counter()
            for i in range(turns):
                ticket = handle.agent.followup([rec.TextPart(text=f"prompt {i}")])
                outcomes.add(type(await ticket.wait()).__name__)
            seconds = time.perf_counter() - t0
            await handle.dispose()
    finally:
        if journal is not None:
            journal.close()
    return {"s": seconds, "records": len(session.records), "outcomes": sorted(outcomes)}
