"""What the peer answers to every kind of bad input, and that the stream survives it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from acp_server.rpc.dispatch import Router
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest
from tests.support.memory import peer_harness, route_table

pytestmark = pytest.mark.anyio


class Echo(msgspec.Struct):
    text: str
    count: int = 1


def echo_dispatcher() -> Router:
    dispatcher = Router()

    async def echo(request: IncomingRequest, value: Echo) -> Any:
        return {"echo": value.text * value.count}

    async def explode(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        raise RuntimeError("secret internal detail /etc/passwd")

    async def refuse(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        raise RpcError(-32002, "Resource not found", "no such thing")

    dispatcher.install(
        route_table({"echo": echo, "explode": explode, "refuse": refuse}, {"echo": Echo})
    )
    return dispatcher


PING = {"jsonrpc": "2.0", "id": "ping", "method": "echo", "params": {"text": "alive"}}


async def expect_alive(client: Any) -> None:
    await client.write(PING)
    frame = await client.read()
    assert frame == {"jsonrpc": "2.0", "id": "ping", "result": {"echo": "alive"}}


@pytest.mark.parametrize(
    ("line", "code", "reply_id"),
    [
        (b"not json", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"echo"', -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"\xff"}}', -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"params":' + b"[" * 10**5 + b"]" * 10**5 + b"}", -32700, None),
        (b'{"jsonrpc":"2.0","method":"\\ud800"}', -32700, None),
        (b"[1, 2]", -32600, None),
        (b'"a string"', -32600, None),
        (b"{}", -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"echo"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"echo"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}', -32600, None),
        (b'{"id":7,"method":"echo","params":{"text":"x"}}', -32600, 7),
        (b'{"jsonrpc":"1.0","id":"x","method":"echo"}', -32600, "x"),
        (b'{"jsonrpc":"2.0","id":8,"method":42}', -32600, 8),
        (b'{"jsonrpc":"2.0","id":9}', -32600, 9),
        (b'{"jsonrpc":"2.0","method":7}', -32600, None),
    ],
)
async def test_malformed_line_gets_one_error_and_stream_continues(
    line: bytes, code: int, reply_id: Any
) -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write(line)
        frame = await client.read()
        assert frame["jsonrpc"] == "2.0"
        assert frame["id"] == reply_id
        assert frame["error"]["code"] == code
        await expect_alive(client)


async def test_unknown_method_gets_method_not_found() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": 1, "method": "session/set_model"})
        frame = await client.read()
        assert frame["id"] == 1
        assert frame["error"]["code"] == -32601


async def test_extension_and_dollar_requests_get_method_not_found() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": 1, "method": "_zed.dev/thing", "params": {}})
        await client.write({"jsonrpc": "2.0", "id": 2, "method": "$/cancel_request", "params": {}})
        codes = {(await client.read())["error"]["code"] for _ in range(2)}
        assert codes == {-32601}


async def test_bad_params_name_the_field_path() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": 3, "method": "echo", "params": {"text": 5}})
        frame = await client.read()
        assert frame["error"]["code"] == -32602
        assert "$.text" in frame["error"]["data"]


async def test_handler_exception_is_internal_error_without_details() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": 4, "method": "explode"})
        frame = await client.read()
        assert frame["error"] == {"code": -32603, "message": "Internal error"}
        await expect_alive(client)


async def test_handler_rpc_error_is_passed_through() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": 5, "method": "refuse"})
        frame = await client.read()
        assert frame["error"] == {
            "code": -32002,
            "message": "Resource not found",
            "data": "no such thing",
        }


async def test_null_id_is_a_request_and_is_answered_with_null() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write(
            {"jsonrpc": "2.0", "id": None, "method": "echo", "params": {"text": "n"}}
        )
        frame = await client.read()
        assert frame == {"jsonrpc": "2.0", "id": None, "result": {"echo": "n"}}


async def test_notifications_and_responses_are_never_answered() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write({"jsonrpc": "2.0", "method": "unknown/notification", "params": {}})
        await client.write({"jsonrpc": "2.0", "method": "echo", "params": {"text": "x"}})
        await client.write({"jsonrpc": "2.0", "id": 12345, "result": {}})
        await client.write({"jsonrpc": "2.0", "id": 12346, "error": {"code": 1, "message": "m"}})
        await client.write({"id": 1, "result": None})
        await expect_alive(client)  # the first frame we read is the ping's answer


async def test_crlf_lines_blank_lines_and_unknown_fields_are_accepted() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write_raw(b"\n  \r\n")
        await client.write_raw(
            b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a","extra":1},'
            b'"unknown":true}\r\n'
        )
        assert (await client.read())["result"] == {"echo": "a"}


async def test_over_long_line_is_refused_and_next_line_works() -> None:
    async with peer_harness(echo_dispatcher(), max_line_bytes=1024) as (_, client):
        big = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"' + b"x" * 5000 + b'"}}'
        for start in range(0, len(big), 700):  # arrives in pieces, as from a pipe
            await client.write_raw(big[start : start + 700])
        await client.write_raw(b"\n")
        frame = await client.read()
        assert frame["id"] is None
        assert frame["error"]["code"] == -32600
        assert "1024-byte" in frame["error"]["data"]
        await expect_alive(client)


async def test_line_split_across_reads_is_reassembled() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        data = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"joined"}}\n'
        for byte in data:
            await client.write_raw(bytes([byte]))
        assert (await client.read())["result"] == {"echo": "joined"}


async def test_final_line_without_newline_is_handled_at_eof() -> None:
    async with peer_harness(echo_dispatcher()) as (_, client):
        await client.write_raw(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"t"}}')
        client.close_input()
        frames = await client.read_all()
        assert frames == [{"jsonrpc": "2.0", "id": 1, "result": {"echo": "t"}}]
