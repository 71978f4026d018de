"""The peer (acp_server/rpc/peer.py): requests in both directions: ids, pending table, timeouts,
`$/cancel_request`, ordering. What it answers to bad input: tests/rpc/test_peer_framing.py."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from acp_server.rpc.dispatch import Router
from acp_server.rpc.errors import MalformedAnswer, PeerClosed, RemoteError, RequestTimeout
from acp_server.rpc.peer import IncomingRequest, Peer
from tests.support.memory import ClientSide, peer_harness, route_table

pytestmark = pytest.mark.anyio


class Answer(msgspec.Struct):
    value: int


async def test_outgoing_request_gets_its_own_ids_and_result() -> None:
    async with peer_harness(Router()) as (peer, client):
        results: list[Answer] = []

        async def ask() -> None:
            results.append(await peer.request("fs/read_text_file", {"path": "/a"}, Answer))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            first = await client.read()
            tg.start_soon(ask)
            second = await client.read()
            assert (first["id"], second["id"]) == (0, 1)
            assert first["method"] == "fs/read_text_file"
            # Answer out of order; each caller gets its own result.
            await client.write({"jsonrpc": "2.0", "id": 1, "result": {"value": 11}})
            await client.write({"jsonrpc": "2.0", "id": 0, "result": {"value": 10}})
        assert sorted(r.value for r in results) == [10, 11]


async def test_error_answer_raises_remote_error() -> None:
    async with peer_harness(Router()) as (peer, client):
        async with anyio.create_task_group() as tg:
            outcome: list[BaseException] = []

            async def ask() -> None:
                try:
                    await peer.request("terminal/create", {}, Answer)
                except RemoteError as exc:
                    outcome.append(exc)

            tg.start_soon(ask)
            frame = await client.read()
            await client.write(
                {
                    "jsonrpc": "2.0",
                    "id": frame["id"],
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
        assert isinstance(outcome[0], RemoteError)
        assert outcome[0].code == -32601


async def test_a_result_of_the_wrong_shape_raises_malformed_answer_naming_the_field() -> None:
    async with peer_harness(Router()) as (peer, client):
        outcome: list[BaseException] = []

        async def ask() -> None:
            try:
                await peer.request("fs/read_text_file", {"path": "/a"}, Answer)
            except MalformedAnswer as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            frame = await client.read()
            await client.write({"jsonrpc": "2.0", "id": frame["id"], "result": {"value": "ten"}})
    assert len(outcome) == 1
    assert str(outcome[0]) == (
        "fs/read_text_file got a malformed answer: Expected `int`, got `str` - at `$.value`"
    )


async def test_timeout_sends_cancel_request_and_late_answer_is_dropped() -> None:
    async with peer_harness(Router()) as (peer, client):
        failures: list[BaseException] = []

        async def ask() -> None:
            try:
                await peer.request("session/request_permission", {}, Answer, timeout=0.05)
            except RequestTimeout as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            request = await client.read()
            cancel = await client.read()
        assert cancel == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": request["id"]},
        }
        assert len(failures) == 1
        # A late answer to the abandoned request is dropped, and the peer keeps working.
        await client.write({"jsonrpc": "2.0", "id": request["id"], "result": {"value": 1}})
        assert peer._pending == {}


async def test_cancelled_caller_sends_cancel_request() -> None:
    async with peer_harness(Router()) as (peer, client):
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()

            async def ask() -> None:
                with scope:
                    await peer.request("fs/write_text_file", {}, Answer)

            tg.start_soon(ask)
            request = await client.read()
            scope.cancel()
            cancel = await client.read()
        assert cancel["method"] == "$/cancel_request"
        assert cancel["params"] == {"requestId": request["id"]}
        assert peer._pending == {}


async def test_pending_requests_fail_at_once_when_input_ends() -> None:
    async with peer_harness(Router()) as (peer, client):
        failures: list[BaseException] = []

        async def ask() -> None:
            try:
                await peer.request("session/request_permission", {}, Answer)
            except PeerClosed as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await client.read()
            client.close_input()
        assert len(failures) == 1
        with pytest.raises(PeerClosed):
            await peer.request("fs/read_text_file", {}, Answer)


def slow_dispatcher(started: anyio.Event, release: anyio.Event) -> Router:
    dispatcher = Router()

    async def slow(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        request.admit()
        started.set()
        await release.wait()
        return {"done": True}

    async def prompt_like(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        answered = anyio.Event()
        request.on_cancel_request = answered.set
        request.admit()
        await answered.wait()
        return {"stopReason": "cancelled"}

    dispatcher.install(route_table({"slow": slow, "prompt_like": prompt_like}))
    return dispatcher


async def test_incoming_cancel_request_answers_request_cancelled() -> None:
    started, release = anyio.Event(), anyio.Event()
    async with peer_harness(slow_dispatcher(started, release)) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": "s1", "method": "slow"})
        await started.wait()
        await client.write(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "s1"}}
        )
        frame = await client.read()
        assert frame == {
            "jsonrpc": "2.0",
            "id": "s1",
            "error": {"code": -32800, "message": "Request cancelled"},
        }


async def test_cancel_request_hook_lets_handler_answer_its_own_way() -> None:
    started, release = anyio.Event(), anyio.Event()
    async with peer_harness(slow_dispatcher(started, release)) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": 7, "method": "prompt_like"})
        await client.write(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}}
        )
        assert await client.read() == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"stopReason": "cancelled"},
        }


async def test_cancel_request_for_unknown_id_is_ignored() -> None:
    started, release = anyio.Event(), anyio.Event()
    async with peer_harness(slow_dispatcher(started, release)) as (_, client):
        await client.write(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 999}}
        )
        await client.write({"jsonrpc": "2.0", "method": "$/cancel_request", "params": 5})
        await client.write({"jsonrpc": "2.0", "id": 1, "method": "slow"})
        await started.wait()
        release.set()
        assert (await client.read())["id"] == 1


async def test_updates_queued_before_a_response_are_written_before_it() -> None:
    dispatcher = Router()
    holder: list[Peer] = []

    async def stream(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        for index in range(200):
            await holder[0].notify("session/update", {"n": index})
        return {"stopReason": "end_turn"}

    dispatcher.install(route_table({"stream": stream}))
    async with peer_harness(dispatcher) as (peer, client):
        holder.append(peer)
        await client.write({"jsonrpc": "2.0", "id": 1, "method": "stream"})
        frames = [await client.read() for _ in range(201)]
    assert [f["params"]["n"] for f in frames[:200]] == list(range(200))
    assert frames[200] == {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}


async def test_next_line_waits_until_the_previous_request_is_admitted() -> None:
    dispatcher = Router()
    registry: set[str] = set()
    seen: list[bool] = []

    async def create(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        await anyio.sleep(0.05)  # registration takes a while, then the request is admitted
        registry.add("s")
        return {}

    async def use(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        seen.append("s" in registry)
        return {}

    dispatcher.install(route_table({"create": create, "use": use}))
    async with peer_harness(dispatcher) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": 1, "method": "create"})
        await client.write({"jsonrpc": "2.0", "id": 2, "method": "use"})
        await client.read()
        await client.read()
    assert seen == [True]


async def test_input_end_waits_for_requests_in_flight_then_returns() -> None:
    started, release = anyio.Event(), anyio.Event()
    async with peer_harness(slow_dispatcher(started, release)) as (_, client):
        await client.write({"jsonrpc": "2.0", "id": 1, "method": "slow"})
        await started.wait()
        client.close_input()
        await anyio.sleep(0.05)
        release.set()
        frames = await client.read_all()
    assert frames == [{"jsonrpc": "2.0", "id": 1, "result": {"done": True}}]


async def test_close_abandons_work_and_returns_promptly() -> None:
    started, cancelled = anyio.Event(), anyio.Event()
    dispatcher = Router()

    async def stuck(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        request.admit()
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()  # only cancellation can end sleep_forever

    dispatcher.install(route_table({"stuck": stuck}))
    with anyio.fail_after(10):  # a guard against a hang, not a speed measure
        async with peer_harness(dispatcher) as (peer, client):
            await client.write({"jsonrpc": "2.0", "id": 1, "method": "stuck"})
            await started.wait()
            peer.close()
            written = await client.read_all()
    assert cancelled.is_set()
    assert written == []  # no response, no error: the abandoned request is not answered


async def test_client_side_helper_reads_frames() -> None:
    # Guards the harness itself: a frame split over two chunks is read whole.
    send, receive = anyio.create_memory_object_stream[bytes](4)
    to_peer, unused = anyio.create_memory_object_stream[bytes](4)
    with send, receive, to_peer, unused:
        client = ClientSide(to_peer, receive)
        await send.send(b'{"a"')
        await send.send(b":1}\n")
        assert await client.read() == {"a": 1}


async def test_a_requests_follow_ups_run_once_its_response_is_written() -> None:
    """Work queued behind a response (a new session's slash-command scan, the warm-up's start)
    runs once the response is on the wire, not merely queued: the client does not wait for it.
    The follow-up looks without waiting: the response must already be in the client's pipe."""
    dispatcher = Router()
    seen: list[bytes | None] = []
    looked = anyio.Event()
    pipe: list[Any] = []

    async def create(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        async def follow_up() -> None:
            try:
                seen.append(pipe[0].receive_nowait())
            except anyio.WouldBlock:
                seen.append(None)  # queued, not written
            looked.set()

        request.after_response.append(follow_up)
        return {"sessionId": "s"}

    dispatcher.install(route_table({"create": create}))
    async with peer_harness(dispatcher) as (_, client):
        pipe.append(client._from_peer)
        await client.write({"jsonrpc": "2.0", "id": 1, "method": "create"})
        with anyio.fail_after(30):
            await looked.wait()
    assert seen[0] is not None, "the follow-up ran before the response was written"
    assert msgspec.json.decode(seen[0]) == {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}}


async def test_sent_waits_for_the_frames_queued_before_it_only() -> None:
    """`FrameWriter.sent` returns once what was queued before the call is written, though the
    client reads nothing and more frames are queued behind than its pipe holds (the harness's
    pipe holds 100 writes): unlike `drained`, which waits for the whole queue."""
    async with peer_harness(Router()) as (peer, client):
        await peer.notify("session/update", {"n": 0})
        waiter_done = anyio.Event()

        async def wait_sent() -> None:
            await peer.writer.sent()
            waiter_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_sent)
            for index in range(1, 301):
                await peer.notify("session/update", {"n": index})
                await anyio.lowlevel.checkpoint()  # one write (one pipe slot) per frame
            with anyio.fail_after(30):
                await waiter_done.wait()
        frames = [await client.read() for _ in range(301)]
    assert [f["params"]["n"] for f in frames] == list(range(301))
