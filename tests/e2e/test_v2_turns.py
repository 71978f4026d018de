"""v2 turns through the real process with raw frames, where the SDK client hides a detail:
when each prompt is answered, what a held or refused prompt is answered, the foreground states
around a wait on the user, a command's display terminal and its processes on cancel, and that
nothing of a turn follows its idle. Every frame is checked against the v2 schema and the
allow-lists (tests/support/wire_v2.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.processes import existing, wait_for_pids
from tests.support.raw_client import RawClient, new_session_v2, raw_agent, text
from tests.support.scripted_model import script
from tests.support.tool_client import DONE, SANDBOXED, call
from tests.support.wire_v2 import after_idle, validate_agent_frame_v2

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only: /proc and process groups"),
]

SLOW = [{"text": "tick ", "repeat": 400, "delay_ms": 20}]


def v2_agent(*args: str, env: dict[str, str] | None = None) -> Any:
    return raw_agent(*args, env=env, validate=validate_agent_frame_v2)


def states(client: RawClient, session_id: str) -> list[str]:
    return [
        u["state"] + (f":{u['stopReason']}" if u.get("stopReason") else "")
        for u in client.updates(session_id)
        if u["sessionUpdate"] == "state_update"
    ]


def index_of(client: RawClient, predicate: Any) -> int:
    return next(i for i, f in enumerate(client.received) if predicate(f))


def is_state(session_id: str, state: str, nth: int = 0) -> Any:
    seen = []

    def test(frame: dict[str, Any]) -> bool:
        params = frame.get("params") or {}
        update = params.get("update") or {}
        if params.get("sessionId") == session_id and update.get("state") == state:
            seen.append(frame)
            return len(seen) == nth + 1
        return False

    return test


async def prompt(client: RawClient, sid: str, words: str) -> int:
    return await client.start("session/prompt", {"sessionId": sid, "prompt": text(words)})


async def test_held_prompts_are_answered_at_their_insertion_each_turn_in_its_own_states(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, [{"text": "one", "repeat": 20, "delay_ms": 10}], [{"text": "two"}])
    async with v2_agent("--model", spec) as client:
        sid = await new_session_v2(client, str(ws))
        first, second = await prompt(client, sid, "first"), await prompt(client, sid, "second")
        answers = [await client.response(first), await client.response(second)]
        await client.wait_for(is_state(sid, "idle", 1))
        ids = [a["result"]["messageId"] for a in answers]
        echoes = [u for u in client.updates(sid) if u["sessionUpdate"] == "user_message"]
        assert [e["messageId"] for e in echoes] == ids and ids[0] != ids[1]
        assert states(client, sid) == ["running", "idle:end_turn", "running", "idle:end_turn"]
        # The second prompt was held: answered once inserted, after the first turn's idle.
        first_idle = index_of(client, is_state(sid, "idle"))
        second_answer = index_of(client, lambda f: f.get("id") == second and "result" in f)
        assert first_idle < second_answer
        assert after_idle(client.received, sid) == []


async def test_a_cancel_answers_held_prompts_cancelled_and_ends_the_turn_idle_cancelled(
    tmp_path: Path, ws: Path
) -> None:
    async with v2_agent("--model", script(tmp_path, SLOW)) as client:
        sid = await new_session_v2(client, str(ws))
        running, held = await prompt(client, sid, "count"), await prompt(client, sid, "later")
        inserted = await client.response(running)
        await client.wait_for(
            lambda f: (
                (f.get("params") or {}).get("update", {}).get("sessionUpdate")
                == "agent_message_chunk"
            )
        )
        await client.notify("session/cancel", {"sessionId": sid})
        dropped = await client.response(held)
        await client.wait_for(is_state(sid, "idle"))
        assert "messageId" in inserted["result"]
        assert dropped["error"]["code"] == -32800
        assert states(client, sid) == ["running", "idle:cancelled"]
        assert after_idle(client.received, sid) == []


async def test_cancel_request_withdraws_a_held_prompt_and_is_ignored_once_inserted(
    tmp_path: Path, ws: Path
) -> None:
    async with v2_agent("--model", script(tmp_path, SLOW)) as client:
        sid = await new_session_v2(client, str(ws))
        running, held = await prompt(client, sid, "count"), await prompt(client, sid, "later")
        await client.response(running)
        await client.notify("$/cancel_request", {"requestId": held})
        await client.notify("$/cancel_request", {"requestId": running})  # answered: ignored
        assert (await client.response(held))["error"]["code"] == -32800
        await client.notify("session/cancel", {"sessionId": sid})
        await client.wait_for(is_state(sid, "idle"))
        answers = [f for f in client.received if f.get("id") in (running, held)]
        assert len(answers) == 2  # one each: no second answer for the inserted prompt


async def test_an_empty_prompt_is_invalid_params_and_nothing_is_inserted(ws: Path) -> None:
    async with v2_agent("--model", "echo") as client:
        sid = await new_session_v2(client, str(ws))
        refused = await client.request("session/prompt", {"sessionId": sid, "prompt": []})
        assert refused["error"]["code"] == -32602
        assert states(client, sid) == []
        assert not [u for u in client.updates(sid) if u["sessionUpdate"] == "user_message"]


async def test_a_prompt_a_hook_refuses_is_an_error_and_its_turn_ends_idle_refusal(
    tmp_path: Path, ws: Path
) -> None:
    config = tmp_path / "config"
    hooks = config / "acp-server" / "hooks.json"
    hooks.parent.mkdir(parents=True)
    block = json.dumps({"decision": "block", "reason": "not on Fridays"})
    hooks.write_text(json.dumps({"hooks": {"prompt_submit": [{"command": f"echo '{block}'"}]}}))
    async with v2_agent("--model", "echo", env={"XDG_CONFIG_HOME": str(config)}) as client:
        sid = await new_session_v2(client, str(ws))
        refused = await client.request("session/prompt", {"sessionId": sid, "prompt": text("x")})
        assert refused["error"]["code"] == -32602
        assert "not on Fridays" in refused["error"]["message"]
        assert "not on Fridays" in refused["error"]["data"]["refusal"]
        assert states(client, sid) == ["running", "idle:refusal"]
        assert not [u for u in client.updates(sid) if u["sessionUpdate"] == "user_message"]


async def test_a_failed_turn_is_answered_then_ends_idle_error_redacted(
    tmp_path: Path, ws: Path
) -> None:
    failing = [{"error": "upstream said no to key sk-abcdefghijklmnopqrstu"}]
    async with v2_agent("--model", script(tmp_path, failing)) as client:
        sid = await new_session_v2(client, str(ws))
        answer = await client.request("session/prompt", {"sessionId": sid, "prompt": text("x")})
        await client.wait_for(is_state(sid, "idle"))
        assert "messageId" in answer["result"]  # inserted: the failure is the turn's end
        [idle] = [u for u in client.updates(sid) if u.get("state") == "idle"]
        assert idle["stopReason"] == "error" and idle["error"]["code"] == -32603
        assert "upstream said no" in idle["error"]["message"]
        assert "abcdefghijklmnopqrstu" not in json.dumps(client.received)


async def test_a_permission_wait_is_requires_action_and_a_cancel_then_idles_cancelled(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("write_file", path=str(ws / "a.txt"), content="x"), DONE)
    async with v2_agent("--model", spec) as client:
        asked, finished = anyio.Event(), anyio.Event()

        async def never_answer(params: dict[str, Any]) -> Any:
            asked.set()
            await finished.wait()  # the user never chose (answered once the test is over)
            return {"outcome": {"outcome": "cancelled"}}

        client.handlers["session/request_permission"] = never_answer
        sid = await new_session_v2(client, str(ws))
        await prompt(client, sid, "write it")
        await asked.wait()
        await client.notify("session/cancel", {"sessionId": sid})
        await client.wait_for(is_state(sid, "idle"))
        assert states(client, sid) == ["running", "requires_action", "idle:cancelled"]
        request = next(
            f for f in client.received if f.get("method") == "session/request_permission"
        )
        subject = request["params"]["subject"]
        assert subject["type"] == "tool_call" and "title" not in subject["toolCall"]
        assert request["params"]["title"].startswith("Allow: Write")
        assert not (ws / "a.txt").exists()
        assert after_idle(client.received, sid) == []
        finished.set()


async def test_a_cancelled_command_is_reaped_before_the_idle_and_shown_exited(
    tmp_path: Path, ws: Path
) -> None:
    pidfile = tmp_path / "pids"
    command = f"echo $$ >> {pidfile}; sleep 300 & echo $! >> {pidfile}; wait"
    spec = script(tmp_path, call("bash", command=command), DONE)
    async with v2_agent("--model", spec, "--mode", "bypass", env=SANDBOXED) as client:
        sid = await new_session_v2(client, str(ws))
        await prompt(client, sid, "run it")
        pids = await wait_for_pids(pidfile, 2)
        await client.notify("session/cancel", {"sessionId": sid})
        await client.wait_for(is_state(sid, "idle"))
        assert existing(pids) == []  # reaped before the idle was written
        assert states(client, sid) == ["running", "idle:cancelled"]
        updates = client.updates(sid)
        terminal = [u for u in updates if u["sessionUpdate"] == "terminal_update"]
        assert terminal[0]["command"] == command and terminal[0]["cwd"] == str(ws)
        assert "exitStatus" in terminal[-1]
        calls = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
        assert calls[-1]["status"] == "cancelled"
        # Run by the agent itself: no client terminal or file system request, ever.
        assert not [
            f for f in client.received if str(f.get("method", "")).startswith(("fs/", "terminal/"))
        ]


async def test_a_file_change_is_a_v2_diff_whose_git_patch_applies(tmp_path: Path, ws: Path) -> None:
    target = ws / "notes.txt"
    target.write_text("one\ntwo\n")
    edit = call("edit_file", path=str(target), old_text="two", new_text="TWO")
    async with v2_agent(
        "--model", script(tmp_path, edit, DONE), "--mode", "accept_edits"
    ) as client:
        sid = await new_session_v2(client, str(ws))
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("edit")})
        await client.wait_for(is_state(sid, "idle"))
        ended = [u for u in client.updates(sid) if u["sessionUpdate"] == "tool_call_update"][-1]
    [diff] = [c for c in ended["content"] if c["type"] == "diff"]
    assert diff["changes"] == [{"operation": "modify", "path": str(target), "fileType": "text"}]
    target.write_text("one\ntwo\n")  # back to before, to apply the patch the client was shown
    patch = tmp_path / "change.patch"
    patch.write_text(diff["patch"]["text"])
    await anyio.run_process(["git", "init", "-q", str(ws)])
    await anyio.run_process(["git", "apply", "--unsafe-paths", "-p0", str(patch)], cwd=ws)
    assert target.read_text() == "one\nTWO\n"
