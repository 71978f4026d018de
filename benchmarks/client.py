"""The raw-pipe client every long-lived mode drives its agents with."""

from __future__ import annotations

import json
import math
import os
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from benchmarks.measure import EXIT_TIMEOUT_S, RESPONSE_TIMEOUT_S, Result, vm_rss_mib


def _json_decoder() -> Callable[[bytes], Any]:
    """msgspec's decoder when importable (a dependency of acp-server, so normally), else json's:
    the client must read faster than the agents write, or it would cap both rates."""
    try:
        import msgspec
    except ImportError:
        return json.loads
    return msgspec.json.Decoder().decode


class AgentError(RuntimeError):
    """An agent misbehaved: closed stdout, answered with an error, or went silent."""


class AgentProcess:
    """One long-lived agent driven over raw pipes, the same way for every agent.

    Single-threaded: this thread writes JSON lines to the agent's stdin and reads its stdout
    line by line, timestamping each line (time.perf_counter) as soon as it is read, then
    decoding it. Reading happens only inside wait_*; none of the modes lets the agent write
    more than a pipe buffer while nobody reads. A watchdog thread kills the agent if one read or
    write blocks for `response_timeout` (RESPONSE_TIMEOUT_S unless a mode expects slow answers),
    so a hung agent fails the run instead of hanging it.
    """

    def __init__(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str] | None = None,
        response_timeout: float = RESPONSE_TIMEOUT_S,
        version: int = 1,
    ) -> None:
        """`version`: the ACP version to speak (acp-server speaks 1 and 2; a v2 turn ends with
        its `idle` state update, not with the prompt's answer)."""
        self.name = name
        self.version = version
        self.response_timeout = response_timeout
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=None if env is None else {**os.environ, **env},
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        self._decode = _json_decoder()
        self._next_id = 0
        self._responses: dict[Any, tuple[float, Result]] = {}
        self.chunks = 0  # agent_message_chunk notifications read so far
        self.updates = 0  # session/update notifications of any kind read so far
        self.tool_statuses: list[str] = []  # the status of every tool_call_update, in order
        self.idles: list[tuple[float, str, Any]] = []  # v2: (read time, session, stopReason)
        self.texts: list[str] | None = None  # set to a list to collect the chunks' text
        self.chunk_times: list[float] | None = None  # set to a list to collect their read times
        self.exit_code: int | None = None
        self._deadline = math.inf  # time.monotonic() by which the pending read/write must end
        self._timed_out = False
        self._closed = threading.Event()
        self._watchdog = threading.Thread(target=self._watch, name=f"watchdog {name}", daemon=True)
        self._watchdog.start()

    def __enter__(self) -> AgentProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _watch(self) -> None:
        while not self._closed.wait(0.25):
            if time.monotonic() > self._deadline:
                self._timed_out = True
                self.proc.kill()
                return

    def _write(self, message: Result) -> float:
        """Write one line; returns the time taken right before the write."""
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        self._deadline = time.monotonic() + self.response_timeout
        t = time.perf_counter()
        try:
            self._stdin.write(data)
            self._stdin.flush()
        except BrokenPipeError as exc:
            raise AgentError(f"{self.name}: stdin closed{self._why()}") from exc
        self._deadline = math.inf
        return t

    def _why(self) -> str:
        return f" (blocked {self.response_timeout:.0f} s, killed)" if self._timed_out else ""

    def _read(self) -> None:
        """Read, timestamp and decode one line; count chunks, file responses by id."""
        self._deadline = time.monotonic() + self.response_timeout
        line = self._stdout.readline()
        t = time.perf_counter()
        self._deadline = math.inf
        if not line:
            raise AgentError(f"{self.name}: stdout closed{self._why()}")
        message = self._decode(line)
        method = message.get("method")
        if method == "session/update":
            self.updates += 1
            update = message["params"]["update"]
            kind = update.get("sessionUpdate")
            if kind == "agent_message_chunk":
                self.chunks += 1
                if self.texts is not None:
                    self.texts.append(update["content"].get("text", ""))
                if self.chunk_times is not None:
                    self.chunk_times.append(t)
            elif kind == "tool_call_update" and "status" in update:
                self.tool_statuses.append(update["status"])
            elif kind == "state_update" and update.get("state") == "idle":
                session_id = message["params"]["sessionId"]
                self.idles.append((t, session_id, update.get("stopReason")))
        elif method is None:
            self._responses[message.get("id")] = (t, message)
        elif "id" in message:  # a request to the client; these benchmarks expect none
            error = {"code": -32601, "message": "Method not found"}
            self._write({"jsonrpc": "2.0", "id": message["id"], "error": error})

    def request(self, method: str, params: Result) -> tuple[int, float]:
        """Send a request; returns its id and the time right before the write."""
        request_id = self._next_id
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return request_id, self._write(message)

    def notify(self, method: str, params: Result) -> float:
        """Send a notification; returns the time right before the write."""
        return self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_response(self, request_id: int) -> tuple[float, Any]:
        """Read until the response to request_id; returns (time it was read, its result)."""
        while request_id not in self._responses:
            self._read()
        t, message = self._responses.pop(request_id)
        if "error" in message:
            raise AgentError(f"{self.name}: request {request_id} failed: {message['error']}")
        return t, message.get("result")

    def wait_chunks(self, count: int) -> None:
        """Read until `count` agent_message_chunk notifications have been read in total."""
        while self.chunks < count:
            self._read()

    def wait_tool_status(self, status: str, count: int) -> None:
        """Read until `count` tool_call_update notifications with `status` have been read."""
        while self.tool_statuses.count(status) < count:
            self._read()

    def call(self, method: str, params: Result) -> Any:
        return self.wait_response(self.request(method, params)[0])[1]

    def turn_end(self, request_id: int, session_id: str) -> tuple[float, Any]:
        """Read until the prompt `request_id`'s turn ended: (the time its end was read, its stop
        reason). v1: the prompt's answer; v2: the session's next `idle` state (the prompt was
        answered at its insertion, earlier)."""
        if self.version == 1:
            t, result = self.wait_response(request_id)
            return t, (result or {}).get("stopReason")
        seen = len(self.idles)
        while not any(s == session_id for _, s, _ in self.idles[seen:]):
            self._read()
        self.wait_response(request_id)  # answered before the idle: already read
        t, _, reason = next(i for i in self.idles[seen:] if i[1] == session_id)
        return t, reason

    def initialize(self) -> None:
        if self.version == 1:
            params: Result = {"protocolVersion": 1, "clientCapabilities": {}}
        else:
            params = {"protocolVersion": 2, "info": {"name": "benchmarks", "version": "1"}}
        result = self.call("initialize", params)
        if (result or {}).get("protocolVersion") != self.version:
            raise AgentError(f"{self.name}: initialize answered {result!r}")

    def new_session(self, cwd: str) -> str:
        params: Result = {"cwd": cwd, "mcpServers": []} if self.version == 1 else {"cwd": cwd}
        return str(self.call("session/new", params)["sessionId"])

    def rss_mib(self) -> float:
        return vm_rss_mib(self.proc.pid)

    def close(self) -> int:
        """Close stdin and wait for the exit (killing after EXIT_TIMEOUT_S); the exit code."""
        if self.exit_code is None:
            self._closed.set()
            with suppress(BrokenPipeError):
                self._stdin.close()
            try:
                self.exit_code = self.proc.wait(EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.exit_code = self.proc.wait()
            self._stdout.close()
        return self.exit_code


def text_prompt(session_id: str, *texts: str) -> Result:
    """session/prompt params with one text block per text."""
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": t} for t in texts]}
