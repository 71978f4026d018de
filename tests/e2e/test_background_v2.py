"""Background commands on ACP v2, through the real `acp-server` with raw frames (every frame
checked against the v2 schema): each item is a display terminal announced before the first
state update that lists it; once reported, every state update carries the list; a client
cancels one item with `terminal/cancel` and sees it exit (before the snapshot that drops it)
while the other runs on; `session/cancel` leaves items running; `session/close` stops them,
sends their exits and an idle `cancelled` before it answers, and nothing after. See
docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.raw_client import RawClient, new_session_v2, raw_agent, text
from tests.support.scripted_model import script
from tests.support.survivors import Escapee
from tests.support.tool_client import DONE, SANDBOXED, call
from tests.support.wire_v2 import validate_agent_frame_v2

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="/proc, the watchdog and the subreaper"),
]

WAIT_S = 30.0


def v2_agent(spec: str) -> Any:
    argv = ("--model", spec, "--mode", "bypass")
    return raw_agent(*argv, env=SANDBOXED, validate=validate_agent_frame_v2)


def item(escapee: Escapee, words: str) -> str:
    return f"echo {words}; {escapee.mark} exec {escapee.path} 300"


def states(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == "state_update"]


def listed(update: dict[str, Any]) -> list[str]:
    return [work["terminalId"] for work in update.get("background") or []]


async def until(condition: Any) -> None:
    with anyio.fail_after(WAIT_S):
        while not condition():  # noqa: ASYNC110 - other processes' state, read from /proc
            await anyio.sleep(0.02)


async def turn_idle(client: RawClient, sid: str, count: int) -> None:
    """Until the session has reported `count` idle states with a stop reason."""
    await client.wait_for(
        lambda _: sum(1 for u in states(client.updates(sid)) if "stopReason" in u) >= count
    )


async def test_one_item_is_cancelled_alone_and_close_stops_the_other_before_answering(
    tmp_path: Path, ws: Path
) -> None:
    one, two = Escapee(tmp_path), Escapee(tmp_path)
    spec = script(
        tmp_path,
        call("bash", command=item(one, "first"), background=True),
        call("bash", command=item(two, "second"), background=True),
        DONE,
    )
    async with v2_agent(spec) as client:
        sid = await new_session_v2(client, str(ws))
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("start both")})
        await turn_idle(client, sid, 1)
        await until(lambda: bool(one.survivors()) and bool(two.survivors()))
        updates = client.updates(sid)

        # Each terminal is announced (command, cwd, cancellable) before a snapshot lists it.
        for name, escapee in (("bg_1", one), ("bg_2", two)):
            opened = next(
                i
                for i, u in enumerate(updates)
                if u["sessionUpdate"] == "terminal_update" and u["terminalId"] == name
            )
            assert updates[opened]["command"] == item(
                escapee, "first" if name == "bg_1" else "second"
            )
            assert updates[opened]["cwd"] == str(ws)
            assert updates[opened]["capabilities"] == {"cancel": {}}
            first_listing = next(i for i, u in enumerate(updates) if name in listed(u))
            assert opened < first_listing
        # Once reported, every state update carries the list.
        reported = next(i for i, u in enumerate(updates) if "background" in u)
        assert all("background" in u for u in states(updates[reported:]))
        assert listed(states(updates)[-1]) == ["bg_1", "bg_2"]

        # The client stops bg_1 alone: accepted, then its exit, then the snapshot without it.
        assert await client.call("terminal/cancel", {"sessionId": sid, "terminalId": "bg_1"}) == {}
        await client.wait_for(
            lambda _: any(
                u.get("terminalId") == "bg_1" and "exitStatus" in u for u in client.updates(sid)
            )
        )
        await client.wait_for(lambda _: listed(states(client.updates(sid))[-1]) == ["bg_2"])
        later = client.updates(sid)[len(updates) :]
        exited = next(i for i, u in enumerate(later) if "exitStatus" in u)
        assert later[exited]["exitStatus"] == {"signal": "SIGTERM"}
        assert later[exited]["capabilities"] is None
        assert "first" in base64.b64decode(later[exited]["output"]["data"]).decode()
        dropped = next(i for i, u in enumerate(later) if u["sessionUpdate"] == "state_update")
        assert exited < dropped and later[dropped]["state"] == "idle"
        assert "stopReason" not in later[dropped]  # a snapshot, not a completion
        await until(lambda: not one.survivors())
        assert two.survivors()
        again = await client.request("terminal/cancel", {"sessionId": sid, "terminalId": "bg_1"})
        assert again["error"]["code"] == -32602 and again["error"]["data"] == {"terminalId": "bg_1"}
        by_call = await client.request("tool_call/cancel", {"sessionId": sid, "toolCallId": "bg_2"})
        assert by_call["error"]["code"] == -32602

        # session/cancel stops foreground work only.
        await client.notify("session/cancel", {"sessionId": sid})
        await client.call("session/list", {})  # a round trip: the cancel was handled
        assert two.survivors()

        # session/close: bg_2's exit, then idle `cancelled` with nothing in the background,
        # then the answer; nothing after it.
        closed = await client.start("session/close", {"sessionId": sid})
        answer = await client.response(closed)
        at = client.received.index(answer)
        before = [
            f["params"]["update"]
            for f in client.received[:at]
            if f.get("method") == "session/update"
        ]
        exit_two = next(
            i for i, u in enumerate(before) if u.get("terminalId") == "bg_2" and "exitStatus" in u
        )
        final = before[-1]
        assert final == {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "cancelled",
            "background": [],
        }
        assert exit_two < len(before) - 1
        assert two.survivors() == []
        await client.call("session/list", {})
        assert [f for f in client.received[at:] if f.get("method") == "session/update"] == []


async def test_a_cancelled_turn_leaves_its_item_listed_and_running(
    tmp_path: Path, ws: Path
) -> None:
    one = Escapee(tmp_path)
    spec = script(
        tmp_path,
        call("bash", command=item(one, "server"), background=True),
        [{"delay_ms": 600000}],
    )
    async with v2_agent(spec) as client:
        sid = await new_session_v2(client, str(ws))
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("go")})
        await until(lambda: bool(one.survivors()))
        await client.wait_for(lambda _: any(listed(u) for u in states(client.updates(sid))))
        await client.notify("session/cancel", {"sessionId": sid})
        await turn_idle(client, sid, 1)
        idle = [u for u in states(client.updates(sid)) if "stopReason" in u][-1]
        assert idle["stopReason"] == "cancelled" and listed(idle) == ["bg_1"]
        assert one.survivors()
        # The item's output reaches its terminal while it runs.
        await client.wait_for(
            lambda _: any(
                u.get("terminalId") == "bg_1"
                and "output" in u
                and "server" in base64.b64decode(u["output"]["data"]).decode()
                for u in client.updates(sid)
            )
        )
        # A resume shows the running item's terminal again before the state that lists it.
        count = len(client.received)
        resumed = await client.start("session/resume", {"sessionId": sid, "cwd": str(ws)})
        answer = await client.response(resumed)
        shown = [
            f["params"]["update"]
            for f in client.received[count : client.received.index(answer)]
            if f.get("method") == "session/update"
        ]
        assert [u["sessionUpdate"] for u in shown][-2:] == ["terminal_update", "state_update"]
        assert shown[-2]["terminalId"] == "bg_1" and shown[-2]["capabilities"] == {"cancel": {}}
        assert listed(shown[-1]) == ["bg_1"]
    assert one.survivors() == []  # the end of the connection stops it
