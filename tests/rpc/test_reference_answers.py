"""The peer and its router answer JSON-RPC 2.0 as jsonrpcserver, the reference the design names,
does: the same result, and the same code and message for each standard error, line for line.

jsonrpcserver no longer runs in the agent (one run path, issue 36: the router already did all
it did; see docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md); it is the dev
dependency this test runs each line through, with its own parsing and schema validation. Where
we differ on purpose, the test says so: an invalid request keeps its readable id (ACP asks for
it), and an internal error carries no exception text (nothing of a handler's error reaches the
client)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from jsonrpcserver import Error, Success, async_dispatch
from jsonrpcserver.exceptions import JsonRpcError
from jsonrpcserver.result import Result

from acp_server.rpc.dispatch import Router
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest
from tests.support.memory import peer_harness, route_table

pytestmark = pytest.mark.anyio


class Echo(msgspec.Struct):
    text: str
    count: int = 1


async def ours_echo(request: IncomingRequest, value: Echo) -> Any:
    return {"echo": value.text * value.count}


async def ours_explode(request: IncomingRequest, params: Any) -> Any:
    raise RuntimeError("secret internal detail")


async def ours_refuse(request: IncomingRequest, params: Any) -> Any:
    raise RpcError(-32002, "Resource not found", "no such thing")


async def theirs_echo(text: str, count: int = 1) -> Result:
    return Success({"echo": text * count})


async def theirs_explode() -> Result:
    raise RuntimeError("secret internal detail")


async def theirs_refuse() -> Result:
    raise JsonRpcError(-32002, "Resource not found", "no such thing")


async def theirs_declines() -> Result:
    return Error(-32002, "Resource not found", "no such thing")


THEIRS = {
    "echo": theirs_echo,
    "explode": theirs_explode,
    "refuse": theirs_refuse,
    "declines": theirs_declines,
}


def router() -> Router:
    dispatcher = Router()
    handlers = {"echo": ours_echo, "explode": ours_explode, "refuse": ours_refuse}
    dispatcher.install(route_table({**handlers, "declines": ours_refuse}, {"echo": Echo}))
    return dispatcher


LINES = {
    "success": '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"ab","count":2}}',
    "unknown method": '{"jsonrpc":"2.0","id":2,"method":"session/set_model","params":{}}',
    "missing param": '{"jsonrpc":"2.0","id":3,"method":"echo","params":{}}',
    "handler's error": '{"jsonrpc":"2.0","id":4,"method":"refuse"}',
    "handler's error result": '{"jsonrpc":"2.0","id":5,"method":"declines"}',
    "handler fails": '{"jsonrpc":"2.0","id":6,"method":"explode"}',
    "not json": "{not json",
    "invalid request": '{"jsonrpc":"1.0","id":"x","method":"echo"}',
}


async def answers() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """(ours, theirs) for each line."""
    pairs = {}
    async with peer_harness(router()) as (_, client):
        for case, line in LINES.items():
            await client.write(line)
            theirs = json.loads(await async_dispatch(line, methods=THEIRS))
            pairs[case] = (await client.read(), theirs)
    return pairs


async def test_each_line_gets_the_references_result_or_error_code_and_message() -> None:
    for case, (ours, theirs) in (await answers()).items():
        if "result" in theirs:
            assert ours == theirs, case
            continue
        assert (ours["error"]["code"], ours["error"]["message"]) == (
            theirs["error"]["code"],
            theirs["error"]["message"],
        ), case


async def test_the_data_agrees_where_it_carries_no_detail_of_ours() -> None:
    pairs = await answers()
    for case in ("unknown method", "handler's error", "handler's error result"):
        ours, theirs = pairs[case]
        assert ours == theirs, case
    # Where we differ on purpose: an invalid request keeps its readable id, and a failed
    # handler's text stays in the agent's log.
    ours, theirs = pairs["invalid request"]
    assert (ours["id"], theirs["id"]) == ("x", None)
    ours, theirs = pairs["handler fails"]
    assert theirs["error"]["data"] == "secret internal detail"
    assert "data" not in ours["error"]


async def test_a_notification_gets_no_answer_from_either() -> None:
    line = '{"jsonrpc":"2.0","method":"echo","params":{"text":"n"}}'
    assert await async_dispatch(line, methods=THEIRS) == ""
    async with peer_harness(router()) as (_, client):
        await client.write(line)
        await client.write(LINES["success"])
        assert (await client.read())["id"] == 1  # the first frame out answers the request
