"""JSON-RPC batches, read when the peer is told to (an ACP v2 connection): one array of answers
for the requests in a batch, none for an all-notification batch, `-32600` for an empty one, an
invalid element answered in the array; work after a request's answer waits for the array. Off
(ACP v1), any array is one `-32600`."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from acp_server.rpc.dispatch import Router
from acp_server.rpc.peer import IncomingRequest, Peer
from tests.support.memory import ClientSide, peer_harness, route_table

pytestmark = pytest.mark.anyio


class Echo(msgspec.Struct):
    text: str


def frame(request_id: Any, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def dispatcher(peers: list[Peer]) -> Router:
    """`echo` answers its text; `later` answers, then notifies `after` (work after its
    response) through the peer put in `peers`."""
    router = Router()

    async def echo(request: IncomingRequest, value: Echo) -> Any:
        return {"echo": value.text}

    async def later(request: IncomingRequest, value: Echo) -> Any:
        async def follow_up() -> None:
            await peers[0].notify("after", {"text": value.text})

        request.after_response.append(follow_up)
        return {"later": value.text}

    router.install(route_table({"echo": echo, "later": later}, {"echo": Echo, "later": Echo}))
    return router


async def batched(client: ClientSide, items: list[Any]) -> None:
    await client.write(json.dumps(items).encode())


async def array(client: ClientSide) -> list[dict[str, Any]]:
    """The next frame, which must be an array (a batch's answers)."""
    answers: Any = await client.read()
    assert isinstance(answers, list)
    return answers


async def alive(client: ClientSide) -> None:
    await client.write(frame("ping", "echo", text="alive"))
    assert await client.read() == {"jsonrpc": "2.0", "id": "ping", "result": {"echo": "alive"}}


async def test_the_requests_of_a_batch_are_answered_in_one_array() -> None:
    peers: list[Peer] = []
    router = dispatcher(peers)
    async with peer_harness(router) as (peer, client):
        peer.batches = True
        peers.append(peer)
        await batched(client, [frame(1, "echo", text="a"), frame("two", "echo", text="b")])
        answers = await array(client)
        assert sorted(json.dumps(a, sort_keys=True) for a in answers) == sorted(
            json.dumps(a, sort_keys=True)
            for a in (
                {"jsonrpc": "2.0", "id": 1, "result": {"echo": "a"}},
                {"jsonrpc": "2.0", "id": "two", "result": {"echo": "b"}},
            )
        )
        await alive(client)


async def test_an_all_notification_batch_gets_no_answer_and_an_empty_one_an_error() -> None:
    peers: list[Peer] = []
    router = dispatcher(peers)
    async with peer_harness(router) as (peer, client):
        peer.batches = True
        peers.append(peer)
        await batched(client, [{"jsonrpc": "2.0", "method": "nothing", "params": {}}])
        await batched(client, [])
        empty = await client.read()  # the next frame: nothing answered the notification
        assert empty["id"] is None and empty["error"]["code"] == -32600
        await alive(client)


async def test_an_invalid_element_is_answered_in_the_array_beside_the_valid_ones() -> None:
    peers: list[Peer] = []
    router = dispatcher(peers)
    async with peer_harness(router) as (peer, client):
        peer.batches = True
        peers.append(peer)
        wrong_version = {"jsonrpc": "1.0", "id": 5, "method": "echo"}
        await batched(client, [1, wrong_version, frame(3, "echo", text="c")])
        answers = await array(client)
        by_id = {a["id"]: a for a in answers}
        assert by_id[None]["error"]["code"] == -32600
        assert by_id[5]["error"]["code"] == -32600
        assert by_id[3]["result"] == {"echo": "c"}
        assert len(answers) == 3


async def test_work_after_an_answer_waits_for_the_batchs_array() -> None:
    peers: list[Peer] = []
    router = dispatcher(peers)
    async with peer_harness(router) as (peer, client):
        peer.batches = True
        peers.append(peer)
        await batched(client, [frame(1, "later", text="x"), frame(2, "echo", text="y")])
        first = await array(client)
        second = await client.read()
        assert len(first) == 2
        assert second == {"jsonrpc": "2.0", "method": "after", "params": {"text": "x"}}


async def test_without_batches_any_array_is_one_invalid_request() -> None:
    peers: list[Peer] = []
    router = dispatcher(peers)
    async with peer_harness(router) as (_, client):
        await batched(client, [frame(1, "echo", text="a")])
        refused = await client.read()
        assert refused["id"] is None and refused["error"]["code"] == -32600
        await alive(client)
