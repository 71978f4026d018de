"""Property: every request line gets exactly one well-formed response; nothing else does.

Random bytes, random JSON and random envelopes go through the real dispatcher and the real
ACP connection handlers, in process (many examples) and through the real process (fewer).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_server.acp.connection import AcpConnection
from acp_server.acp.options import ServerOptions
from acp_server.models.script import echo_provider
from acp_server.process import ProcessRegistry
from acp_server.rpc.dispatch import Router
from tests.support.agent_process import SERVER
from tests.support.memory import peer_harness

METHODS = [
    "initialize",
    "authenticate",
    "session/new",
    "session/prompt",
    "session/cancel",
    "$/cancel_request",
    "_ext/thing",
    "unknown",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, Any]:
    frame: dict[str, Any] = {}
    if draw(st.booleans()):
        frame["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "1.0", 2]))
    if draw(st.booleans()):
        frame["id"] = draw(
            st.one_of(
                st.integers(-5, 5),
                st.text(max_size=4),
                st.none(),
                st.booleans(),
                st.floats(allow_nan=False),
            )
        )
    if draw(st.booleans()):
        frame["method"] = draw(st.one_of(st.sampled_from(METHODS), st.integers()))
    if draw(st.booleans()):
        frame["params"] = draw(
            st.one_of(
                json_values,
                st.fixed_dictionaries({"protocolVersion": st.integers(0, 3)}),
                st.fixed_dictionaries(
                    {"cwd": st.sampled_from(["/tmp", "rel", 3]), "mcpServers": st.just([])}
                ),
                st.fixed_dictionaries({"requestId": st.integers(0, 3)}),
            )
        )
    if draw(st.integers(0, 4)) == 0:
        frame["result"] = draw(json_values)
    if draw(st.integers(0, 4)) == 0:
        frame["error"] = draw(json_values)
    return frame


lines = st.one_of(
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ")),
    json_values.map(lambda v: json.dumps(v).encode()),
    envelopes().map(lambda v: json.dumps(v).encode()),
)


def expected_responses(line: bytes) -> int:
    """The oracle: how many responses a line deserves (0 or 1)."""
    if not line.strip():
        return 0
    try:
        value = msgspec.json.decode(line)
        line.decode()
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return 1
    if not isinstance(value, dict):
        return 1
    if "method" not in value and ("result" in value or "error" in value):
        return 0  # a response: routed or dropped, never answered
    if value.get("jsonrpc") == "2.0" and isinstance(value.get("method"), str) and "id" not in value:
        return 0  # a notification
    return 1


def check_responses(sent: list[bytes], raw_output: list[bytes]) -> None:
    frames = [json.loads(raw) for raw in raw_output]  # every output line is JSON
    # A session the fuzz happened to open may announce its commands after the response: agent
    # notifications are not responses, but they must be well-formed session updates.
    updates = [frame for frame in frames if "method" in frame]
    for update in updates:
        assert update["method"] == "session/update" and "id" not in update
    frames = [frame for frame in frames if "method" not in frame]
    assert len(frames) == sum(expected_responses(line) for line in sent)
    for frame in frames:
        assert frame["jsonrpc"] == "2.0"
        assert "id" in frame
        assert ("result" in frame) != ("error" in frame)
        if "error" in frame:
            assert isinstance(frame["error"]["code"], int)
            assert isinstance(frame["error"]["message"], str)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, min_size=1, max_size=6))
def test_every_request_line_gets_exactly_one_response_in_process(sent: list[bytes]) -> None:
    async def scenario() -> list[bytes]:
        dispatcher = Router()
        with tempfile.TemporaryDirectory() as data_dir:
            return await exchange(dispatcher, data_dir)

    async def exchange(dispatcher: Router, data_dir: str) -> list[bytes]:
        async with anyio.create_task_group() as agents, peer_harness(dispatcher) as (peer, client):
            options = ServerOptions(data_dir=Path(data_dir), model=echo_provider())
            AcpConnection(peer, agents, options, ProcessRegistry()).register(dispatcher)
            for line in sent:
                await client.write(line)
            client.close_input()
            await client.read_all()
        return client.raw_lines

    check_responses(sent, anyio.run(scenario))


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, min_size=5, max_size=40))
def test_every_request_line_gets_exactly_one_response_from_the_process(sent: list[bytes]) -> None:
    proc = subprocess.run(
        [SERVER], input=b"\n".join(sent) + b"\n", capture_output=True, timeout=20, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    check_responses(sent, proc.stdout.splitlines())
