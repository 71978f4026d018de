"""The router (rpc/dispatch.py): a route is a row of the method table and a handler; the table
checks what it is given, and a request for a row served later waits for the table's `load`.
The peer's answers to bad lines and handler errors: tests/rpc/test_peer_framing.py."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from acp_protocol.methods import METHODS, V1, MethodSpec
from acp_protocol.session import ListSessionsRequest
from acp_server.rpc.dispatch import NotificationRoute, Route, Router, RouteTable
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest

pytestmark = pytest.mark.anyio


async def listed(request: IncomingRequest, query: ListSessionsRequest) -> Any:
    return {"sessions": [], "cwd": query.cwd}


async def ignored(params: Any) -> None:
    return None


def call(method: str, params: bytes | None = b"{}", request_id: int = 1) -> IncomingRequest:
    return IncomingRequest(request_id, method, None if params is None else msgspec.Raw(params))


def answer(frame: Any) -> dict[str, Any]:
    decoded: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(frame))
    return decoded


def test_a_route_decodes_into_its_rows_params_type() -> None:
    table = RouteTable.of(METHODS, [Route(V1.session_list, listed)])
    assert table.requests[V1.session_list.name].method.params is ListSessionsRequest


@pytest.mark.parametrize(
    ("route", "why"),
    [
        (
            Route(MethodSpec("session/list", ListSessionsRequest, None, "agent"), listed),
            "not a row of this method table",
        ),
        (Route(V1.fs_read_text_file, listed), "handled by the client"),
        (Route(V1.session_cancel, listed), "is a notification"),
        (NotificationRoute(V1.session_list, ignored), "is a request"),
    ],
)
def test_the_table_refuses_a_route_that_is_not_an_agent_row_of_its_kind(
    route: Route[Any] | NotificationRoute[Any], why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        RouteTable.of(METHODS, [route])


def test_the_table_refuses_a_method_routed_twice() -> None:
    with pytest.raises(ValueError, match="routed twice"):
        RouteTable.of(METHODS, [Route(V1.session_list, listed), Route(V1.session_list, listed)])


async def test_a_request_for_a_row_served_later_waits_for_load_then_is_routed() -> None:
    router = Router()
    loads: list[str] = []

    async def load() -> None:
        loads.append("load")
        router.install(RouteTable.of(METHODS, [Route(V1.session_list, listed)]))

    router.install(RouteTable.of(METHODS, [], load=load))
    frame = answer(await router.dispatch_request(call("session/list", b'{"cwd":"/w"}')))
    assert frame["result"] == {"sessions": [], "cwd": "/w"}
    assert loads == ["load"]
    # Served from now on without loading again; a row nobody serves is then -32601.
    await router.dispatch_request(call("session/list", request_id=2))
    frame = answer(await router.dispatch_request(call("logout", request_id=3)))
    assert frame["error"] == {"code": -32601, "message": "Method not found", "data": "logout"}
    assert loads == ["load"]


@pytest.mark.parametrize(
    "method",
    ["x/unknown", "_vendor/thing", "fs/read_text_file", "$/cancel_request", "session/cancel"],
)
async def test_a_request_outside_the_agents_request_rows_does_not_load(method: str) -> None:
    router = Router()

    async def load() -> None:
        raise AssertionError(f"{method} loaded the later routes")

    router.install(RouteTable.of(METHODS, [], load=load))
    frame = answer(await router.dispatch_request(call(method)))
    assert frame["error"] == {"code": -32601, "message": "Method not found", "data": method}


async def test_a_load_that_refuses_answers_its_error() -> None:
    router = Router()

    async def load() -> None:
        raise RpcError(-32800, "Request cancelled", "the agent is stopping")

    router.install(RouteTable.of(METHODS, [], load=load))
    frame = answer(await router.dispatch_request(call("session/prompt")))
    assert frame["error"] == {
        "code": -32800,
        "message": "Request cancelled",
        "data": "the agent is stopping",
    }


async def test_the_gate_answers_before_anything_loads() -> None:
    router = Router()

    async def load() -> None:
        raise AssertionError("a refused request loaded the later routes")

    def gate(method: str) -> RpcError | None:
        return RpcError(-32600, "Invalid request", f"{method} before initialize")

    router.install(RouteTable.of(METHODS, [], gate=gate, load=load))
    frame = answer(await router.dispatch_request(call("session/prompt")))
    assert frame["error"]["code"] == -32600


async def test_a_notification_decodes_into_its_rows_type() -> None:
    router = Router()
    heard: list[Any] = []

    async def cancel(params: Any) -> None:
        heard.append(params)

    router.install(RouteTable.of(METHODS, [NotificationRoute(V1.session_cancel, cancel)]))
    await router.dispatch_notification("session/cancel", msgspec.Raw(b'{"sessionId":"s"}'))
    await router.dispatch_notification("session/cancel", msgspec.Raw(b'{"sessionId":5}'))
    assert [type(p) for p in heard] == [V1.session_cancel.params]
    assert heard[0].session_id == "s"
