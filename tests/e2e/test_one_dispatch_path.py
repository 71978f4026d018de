"""The one dispatch path through the real process, with raw frames: every method group's
malformed params get -32602 naming the field and the connection lives on; an error raised by a
handler of the runtime's groups (routed once the runtime is loaded) leaves through the
redacting exit, so a provider key in it never reaches the wire (rpc/dispatch.py,
rpc/error_exit.py). In process: every route of the connection is a row of the method table."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_protocol.methods import METHODS
from acp_server.acp.connection import AcpConnection
from acp_server.acp.options import ServerOptions
from acp_server.models.script import echo_provider
from acp_server.process import ProcessRegistry
from acp_server.rpc.dispatch import Router
from tests.support.memory import peer_harness
from tests.support.raw_client import RawClient, raw_agent, text

pytestmark = pytest.mark.anyio

KEY = "Dispatch-Secret-Key-0451"
"""An OPENAI_API_KEY with no `sk-` shape: hidden only because the agent remembers the value."""

BAD_FIELDS: dict[str, Any] = {
    "protocolVersion": "one",
    "methodId": 5,
    "cwd": 5,
    "sessionId": 5,
    "modeId": 5,
    "configId": 5,
    "prompt": 5,
}
"""One wrong-typed field for each method's params (each method reads at least one of them)."""

GROUPS: dict[str, tuple[str, ...]] = {
    "handshake": ("initialize", "authenticate"),
    "lifecycle": (
        "session/new",
        "session/load",
        "session/resume",
        "session/fork",
        "session/close",
        "session/delete",
    ),
    "listing": ("session/list",),
    "config options": ("session/set_mode", "session/set_config_option"),
    "prompts": ("session/prompt",),
}


def environment(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    return {"XDG_CONFIG_HOME": str(config), "OPENAI_API_KEY": KEY}


def agent_args(tmp_path: Path) -> list[str]:
    return ["--model", "echo", "--data-dir", str(tmp_path / "data")]


async def malformed(client: RawClient, method: str, params: Any) -> dict[str, Any]:
    """The error a request with these params gets (params may be any JSON value)."""
    frame = await client.response(await _send(client, method, params))
    assert "error" in frame, f"{method} with {params!r} was answered {frame}"
    error: dict[str, Any] = frame["error"]
    return error


async def _send(client: RawClient, method: str, params: Any) -> int:
    client._next_id += 1
    request_id = client._next_id
    client._methods[request_id] = method
    await client.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return request_id


@pytest.mark.parametrize("group", sorted(GROUPS))
async def test_malformed_params_of_each_method_group_get_invalid_params(
    group: str, tmp_path: Path, workspace: Path
) -> None:
    async with raw_agent(*agent_args(tmp_path), env=environment(tmp_path)) as client:
        for method in GROUPS[group]:
            if method != "initialize":  # a call before `initialize` is refused before routing
                await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            for params in ([1, 2], "params", BAD_FIELDS):
                error = await malformed(client, method, params)
                assert error["code"] == -32602, (method, params, error)
                assert error["message"] == "Invalid params"
                if isinstance(params, dict):
                    assert "at `$." in error["data"], error  # msgspec names the field
                else:
                    assert "Expected `object`" in error["data"], error
        # The connection lives on: the same methods answer well-formed calls, in order.
        await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        listed = await client.call("session/list", {})
        assert listed["sessions"] == []
        result = await client.call("session/new", {"cwd": str(workspace), "mcpServers": []})
        answer = await client.call(
            "session/prompt", {"sessionId": result["sessionId"], "prompt": text("hello")}
        )
        assert answer["stopReason"] == "end_turn"


async def test_a_malformed_cancel_is_ignored_and_the_connection_lives_on(
    tmp_path: Path, workspace: Path
) -> None:
    async with raw_agent(*agent_args(tmp_path), env=environment(tmp_path)) as client:
        await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = await client.call("session/new", {"cwd": str(workspace), "mcpServers": []})
        for params in ([1], {"sessionId": 5}, "x"):
            await client.send({"jsonrpc": "2.0", "method": "session/cancel", "params": params})
        answer = await client.call(
            "session/prompt", {"sessionId": session["sessionId"], "prompt": text("still here")}
        )
        assert answer["stopReason"] == "end_turn"
        # A notification is never answered: nothing but the prompt's answer has an error/id
        # besides the three requests sent.
        answered = [f for f in client.received if "id" in f and "method" not in f]
        assert len(answered) == 3 and all("result" in f for f in answered)


async def test_a_secret_in_a_runtime_group_error_is_redacted_on_the_wire(
    tmp_path: Path, workspace: Path
) -> None:
    # session/load, /resume, /close and /set_config_option are served by the runtime's groups
    # (routed once the warm-up has loaded them); each answers "not found" with the asked-for
    # id in the error.
    async with raw_agent(*agent_args(tmp_path), env=environment(tmp_path)) as client:
        await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        await client.call("session/new", {"cwd": str(workspace), "mcpServers": []})
        asked = {
            "session/load": {"sessionId": KEY, "cwd": str(workspace), "mcpServers": []},
            "session/resume": {"sessionId": f"x{KEY}x", "cwd": str(workspace)},
            "session/close": {"sessionId": f"Bearer {KEY}"},
            "session/set_config_option": {"sessionId": KEY, "configId": "mode", "value": "x"},
        }
        errors = [await malformed(client, method, params) for method, params in asked.items()]
        assert [e["code"] for e in errors] == [-32002, -32002, -32002, -32002]
        assert all("[redacted]" in json.dumps(e) for e in errors), errors
    wire = "\n".join(json.dumps(frame) for frame in client.received)
    assert KEY not in wire
    assert KEY.lower() not in wire.lower()


async def test_each_route_is_a_row_of_the_method_table(tmp_path: Path) -> None:
    router = Router()
    async with anyio.create_task_group() as tg, peer_harness(router) as (peer, client):
        options = ServerOptions(data_dir=tmp_path, model=echo_provider())
        connection = AcpConnection(peer, tg, options, ProcessRegistry())
        connection.register(router)
        before = connection.routes()
        await connection.warm_up()
        after = connection.routes()
        await connection.dispose()
        client.close_input()
    # Before the runtime: the handshake (logout too, since v1's logout: issue 32), session/new
    # and session/cancel, and a load step.
    assert set(before.requests) == {"initialize", "authenticate", "logout", "session/new"}
    assert set(before.notifications) == {"session/cancel"}
    assert before.load is not None and after.load is None
    assert {name for group in GROUPS.values() for name in group} <= set(after.requests)
    assert {"_session/rewind", "session/fork"} <= set(after.requests)
    for name, route in {**after.requests, **after.notifications}.items():
        # The table's own row: its params type is the one the method is decoded into.
        assert route.method is METHODS[name], name


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))
