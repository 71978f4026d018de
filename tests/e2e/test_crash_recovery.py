"""Crash recovery: SIGKILL the real acp-server at random moments; nothing acknowledged is lost.

One data directory, two sessions, many process lifetimes. Each lifetime: start `acp-server`,
`initialize`, create (first lifetime) or `session/load` both sessions, send prompts one after
another on a randomly chosen session, then SIGKILL the process at a random moment: while a turn
streams, right after its tool call, between its fsync and its response, or while idle. Now and
then the kill lands during a `session/load` instead (replay, or the repair of a turn the previous
crash left open).

The rule checked: a prompt answered with `end_turn` is durable. Every later `session/load`
replays it, in order, and the journal finally holds it as a completed turn. A prompt sent but not
answered may be missing (never read) or present, completed or interrupted. And every journal
stays loadable and balanced: one `turn/end` per turn, one `tool/result` per tool call.

A raw-pipe client (JSON lines, one reader with select; no SDK client: speed matters), seeded, so
a failure replays the same schedule (the process timing still varies from run to run).
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_server.session import records as rec
from acp_server.session.journal import JournalStore

SERVER = str(Path(sys.executable).with_name("acp-server"))
SEED = 1234
ITERATIONS = 50
SESSIONS = 2
MAX_PROMPTS = 4  # per lifetime; the last one is the one the kill races
KILL_WINDOW_S = 0.150  # the kill comes this long (at most) after the last prompt was sent,
TURN_WINDOW_S = 0.040  # or, for half the kills, within about one turn's time (mid-stream)
LOAD_KILL_SHARE = 0.15  # lifetimes killed right after a session/load was sent instead
LOAD_KILL_WINDOW_S = 0.010
TIMEOUT_S = 20.0  # per awaited response; only a hung server hits it

# Step 1: streamed text, then a call to a tool that does not exist (it fails, so the model is
# asked again); step 2: streamed text, and the turn completes. About 30 ms per turn.
SCRIPT = {
    "responses": [
        [
            {"text": "a ", "repeat": 5, "delay_ms": 3},
            {"tool_call": {"name": "nothing", "arguments": {"i": 1}}},
        ],
        [{"text": "b ", "repeat": 5, "delay_ms": 3}],
    ]
}

pytestmark = pytest.mark.slow


class ServerDied(AssertionError):
    """The server closed stdout (or broke stdin) although nobody killed it."""


class RawServer:
    """acp-server over raw pipes: JSON lines out, stdout read non-blocking with select."""

    def __init__(self, argv: list[str], stderr: Any) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin
        self._fd = self.proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self._buffer = b""
        self._next_id = 0
        self.eof = False
        self.responses: dict[int, dict[str, Any]] = {}
        self.updates: list[dict[str, Any]] = []  # session/update params, in wire order

    def send(self, method: str, params: dict[str, Any]) -> int:
        request_id = self._next_id
        self._next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            self._stdin.write(line.encode() + b"\n")
            self._stdin.flush()
        except BrokenPipeError:
            raise ServerDied(f"stdin closed while sending {method}") from None
        return request_id

    def _take(self, data: bytes) -> None:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if message.get("method") == "session/update":
                self.updates.append(message["params"])
            elif "method" not in message:
                self.responses[message["id"]] = message
            else:  # a request to the client: these prompts need none
                raise AssertionError(f"unexpected request from the server: {message}")

    def _read_once(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for output; take what is there (or note EOF)."""
        ready, _, _ = select.select([self._fd], [], [], max(0.0, timeout))
        if ready:
            data = os.read(self._fd, 1 << 16)
            if data:
                self._take(data)
            else:
                self.eof = True

    def pump(self, seconds: float) -> None:
        """Keep reading for `seconds` (less if stdout closes)."""
        deadline = time.monotonic() + seconds
        while not self.eof and (remaining := deadline - time.monotonic()) > 0:
            self._read_once(remaining)

    def wait(self, request_id: int) -> dict[str, Any]:
        """Read until the response to `request_id`; returns it (result or error)."""
        deadline = time.monotonic() + TIMEOUT_S
        while request_id not in self.responses:
            if self.eof:
                raise ServerDied(f"stdout closed before the response to request {request_id}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no response to request {request_id} in {TIMEOUT_S} s")
            self._read_once(remaining)
        return self.responses[request_id]

    def call(self, method: str, params: dict[str, Any]) -> Any:
        response = self.wait(self.send(method, params))
        assert "error" not in response, f"{method} failed: {response}"
        return response["result"]

    def kill(self) -> None:
        """SIGKILL, reap, then read what the dead process left in the pipe (the client would
        still read those lines: what they acknowledge counts)."""
        if self.proc.returncode is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        deadline = time.monotonic() + TIMEOUT_S
        while not self.eof and time.monotonic() < deadline:
            self._read_once(deadline - time.monotonic())
        assert self.eof, "stdout stayed open after the server died"

    def reap(self) -> None:
        """Kill if still alive, wait, close the pipes; safe to call more than once."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for pipe in (self._stdin, self.proc.stdout):
            with suppress(BrokenPipeError):
                pipe.close()  # type: ignore[union-attr]


@contextmanager
def running_server(argv: list[str], stderr_path: Path) -> Iterator[RawServer]:
    with stderr_path.open("ab") as stderr:
        server = RawServer(argv, stderr)
        try:
            yield server
        finally:
            server.reap()


@dataclass
class Tracked:
    """What the client knows about one session."""

    session_id: str = ""
    history: list[str] = field(default_factory=list)
    """Prompts known to be in the journal, in order: acknowledged, or seen replayed."""
    acknowledged: set[str] = field(default_factory=set)
    pending: str | None = None
    """The prompt a kill raced: sent, never answered, not yet seen replayed."""
    sent: list[str] = field(default_factory=list)


@dataclass
class Stats:
    lifetimes: int = 0
    load_kills: int = 0
    prompt_kills: int = 0
    killed_before_answer: int = 0
    acknowledged: int = 0
    pending_found_on_load: int = 0


def prompt_params(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def check_replay(server: RawServer, session: Tracked, first_update: int) -> None:
    """The replay of one `session/load`: the known prompts in order (the raced one maybe too),
    and every tool call shown once, then updated once with a final status."""
    updates = [
        p["update"] for p in server.updates[first_update:] if p["sessionId"] == session.session_id
    ]
    prompts = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"]
    allowed = [session.history]
    if session.pending is not None:
        allowed.append([*session.history, session.pending])
    assert prompts in allowed, (
        f"{session.session_id}: replayed prompts {prompts}, expected one of {allowed}"
    )
    acknowledged = [p for p in prompts if p in session.acknowledged]
    assert acknowledged == [p for p in session.sent if p in session.acknowledged]
    if session.pending is not None and prompts[-1:] == [session.pending]:
        session.history.append(session.pending)
    session.pending = None

    calls = [u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"]
    finals = [
        u["toolCallId"]
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed")
    ]
    assert len(calls) == len(set(calls)), f"{session.session_id}: tool call ids replayed twice"
    assert Counter(finals) == Counter(calls), f"{session.session_id}: unbalanced tool calls"


def check_load_answer(response: dict[str, Any]) -> None:
    """A `session/load` result: `{}`, or the optional fields of LoadSessionResponse (modes,
    config options) that a server offering them adds; never an error."""
    result = response.get("result")
    assert isinstance(result, dict) and "error" not in response, f"session/load: {response}"
    assert set(result) <= {"modes", "configOptions", "models", "_meta"}, result


def load_session(server: RawServer, session: Tracked, cwd: str) -> int:
    """Send `session/load`; returns its request id (answered or not)."""
    params = {"sessionId": session.session_id, "cwd": cwd, "mcpServers": []}
    return server.send("session/load", params)


def lifetime(
    server: RawServer,
    sessions: list[Tracked],
    iteration: int,
    rng: random.Random,
    cwd: str,
    stats: Stats,
) -> None:
    """One process lifetime, ending in SIGKILL."""
    stats.lifetimes += 1
    server.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    if iteration == 0:
        for session in sessions:
            session.session_id = server.call("session/new", {"cwd": cwd, "mcpServers": []})[
                "sessionId"
            ]
    else:
        load_kill = rng.random() < LOAD_KILL_SHARE
        victim = rng.randrange(SESSIONS)
        for index, session in enumerate(sessions):
            first_update = len(server.updates)
            request_id = load_session(server, session, cwd)
            if load_kill and index == victim:
                server.pump(rng.uniform(0, LOAD_KILL_WINDOW_S))
                stats.load_kills += 1
                server.kill()
                # A load answered before the kill is checked like any other.
                if request_id in server.responses:
                    check_load_answer(server.responses[request_id])
                    check_replay(server, session, first_update)
                return
            response = server.wait(request_id)
            check_load_answer(response)
            pending = session.pending
            check_replay(server, session, first_update)
            if pending is not None and session.history[-1:] == [pending]:
                stats.pending_found_on_load += 1

    prompts = rng.randint(1, MAX_PROMPTS)
    for n in range(prompts):
        session = rng.choice(sessions)
        assert session.pending is None
        text = f"p-{iteration}-{n}"
        session.sent.append(text)
        request_id = server.send("session/prompt", prompt_params(session.session_id, text))
        if n < prompts - 1:
            response = server.wait(request_id)
        else:
            stats.prompt_kills += 1
            window = KILL_WINDOW_S if rng.random() < 0.5 else TURN_WINDOW_S
            server.pump(rng.uniform(0, window))
            server.kill()
            response = server.responses.get(request_id, {})
            if not response:
                stats.killed_before_answer += 1
                session.pending = text
                return
        result = response.get("result") or {}
        assert result.get("stopReason") == "end_turn", f"{text}: answered {response}"
        session.history.append(text)
        session.acknowledged.add(text)
        stats.acknowledged += 1


def turns_of(records: list[rec.Record]) -> dict[str, list[rec.Record]]:
    """Each turn's records in log order (session-level records, with no turn, left out)."""
    turns: dict[str, list[rec.Record]] = {}
    for record in records:
        turn_id = getattr(record, "turn_id", None)
        if turn_id is not None:
            turns.setdefault(turn_id, []).append(record)
    return turns


def check_journal(store: JournalStore, session: Tracked) -> Counter[str]:
    """Load one session's journal in-process and check it; returns its outcome counts."""
    loaded = store.open(session.session_id)
    loaded.journal.close()
    records = loaded.records
    # One os.write per record: SIGKILL (unlike a power cut) cannot leave half a line.
    assert loaded.truncated_bytes == 0, f"{session.session_id}: a torn last line after SIGKILL"
    again = store.open(session.session_id)
    again.journal.close()
    assert again.repaired is False and again.truncated_bytes == 0
    assert again.records == records, "a second load differs from the first"
    sid = session.session_id

    prompts = [
        "".join(p.text for p in r.content if isinstance(p, rec.TextPart))
        for r in records
        if isinstance(r, rec.UserMessage) and r.origin == "prompt"
    ]
    acknowledged = [p for p in session.sent if p in session.acknowledged]
    assert [p for p in prompts if p in session.acknowledged] == acknowledged, sid
    allowed = [session.history]
    if session.pending is not None:
        allowed.append([*session.history, session.pending])
    assert prompts in allowed, f"{sid}: journal prompts {prompts}, expected one of {allowed}"

    outcomes: Counter[str] = Counter()
    call_ids: list[str] = []
    for turn_id, turn in turns_of(records).items():
        where = f"{sid} {turn_id}"
        assert isinstance(turn[0], rec.TurnStart), f"{where}: starts with {turn[0]}"
        ends = [r for r in turn if isinstance(r, rec.TurnEndRecord)]
        assert len(ends) == 1, f"{where}: {len(ends)} turn/end records"
        assert turn[-1] is ends[0], f"{where}: records after its turn/end"
        user = [r for r in turn if isinstance(r, rec.UserMessage) and r.origin == "prompt"]
        assert len(user) == 1, f"{where}: {len(user)} prompts"
        text = "".join(p.text for p in user[0].content if isinstance(p, rec.TextPart))
        outcome = ends[0].outcome
        outcomes[type(outcome).__name__] += 1
        if text in session.acknowledged:
            assert outcome == rec.Completed(), f"{where} ({text}, acknowledged): {outcome}"
        else:
            assert outcome in (rec.Completed(), rec.InterruptedOutcome()), (
                f"{where} ({text}): {outcome}"
            )
        calls = [
            c.call_id for r in turn if isinstance(r, rec.AssistantMessage) for c in r.tool_calls
        ]
        results = [r.call_id for r in turn if isinstance(r, rec.ToolResult)]
        assert Counter(results) == Counter(calls), f"{where}: calls {calls}, results {results}"
        call_ids += calls
    assert len(call_ids) == len(set(call_ids)), f"{sid}: a tool call id is used twice"
    return outcomes


def stderr_tail(path: Path, lines: int = 40) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def test_sigkill_at_random_moments_loses_nothing_acknowledged(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    data_dir = tmp_path / "data"
    stderr_path = tmp_path / "stderr.log"
    argv = [SERVER, "--model", f"script:{script}", "--data-dir", str(data_dir)]
    cwd = str(tmp_path)
    sessions = [Tracked() for _ in range(SESSIONS)]
    stats = Stats()

    for iteration in range(ITERATIONS):
        with running_server(argv, stderr_path) as server:
            try:
                lifetime(server, sessions, iteration, rng, cwd, stats)
            except AssertionError as exc:
                raise AssertionError(
                    f"lifetime {iteration} ({stats}): {exc}\n"
                    f"--- server stderr (tail) ---\n{stderr_tail(stderr_path)}"
                ) from exc

    # Each record is one os.write, which SIGKILL cannot cut in half: no server's own load may
    # have found a torn or unterminated last line (the journal warns on stderr, logged above).
    log = stderr_tail(stderr_path, lines=10**6)
    assert "torn last line" not in log and "had no newline" not in log, log
    store = JournalStore(data_dir)
    outcomes: Counter[str] = Counter()
    for session in sessions:
        outcomes += check_journal(store, session)
    print(f"crash schedule: {stats}; turn outcomes: {dict(outcomes)}")  # shown by -s or -rP
    # The schedule must really have crashed turns midway (else this proves little).
    assert stats.killed_before_answer > 0 and outcomes["InterruptedOutcome"] > 0, (stats, outcomes)
    assert set(outcomes) <= {"Completed", "InterruptedOutcome"}, outcomes
    assert stats.acknowledged > ITERATIONS, stats
