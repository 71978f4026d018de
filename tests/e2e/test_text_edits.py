"""The text edit formats and the test loop, through the real process and the official SDK client
against a local OpenAI-compatible server (issue 37).

A model configured with `edit_format = "whole_file"` (or `"search_replace"`) answers with its
changes as text: the agent applies them through `write_file` / `edit_file` (permission asked,
a diff shown as a tool call of kind `edit`, journaled with its checkpoint, undone by
`/rewind`), then runs the project's tests (a `bash` call of its own, asked for too) and gives a
failure back to the model, for at most `[tests] max_rounds` runs. The model is asked once when
its edits apply and the tests pass, with temperature 0 and no tool that changes anything. Such a
turn replays as it was shown live (v1's `session/load`, v2's resume with replay).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import embedded_text_resource, resource_block, text_block

from acp_server.agent.edit_formats import (
    FORMAT_REMINDERS,
    SEARCH_REPLACE_PROMPT,
    WHOLE_FILE_PROMPT,
)
from tests.support.agent_process import running_agent
from tests.support.command_sandbox import needs_bwrap
from tests.support.openai_agent import (
    chat_bodies,
    environment,
    start,
    text_reply,
    tool_call,
    updates_of,
)
from tests.support.raw_client import new_session_v2, raw_agent, text
from tests.support.sse_server import FakeServer, serve
from tests.support.tool_client import SANDBOXED, ToolClient
from tests.support.watchdogs import watchdogs
from tests.support.wire_v2 import validate_agent_frame_v2

pytestmark = pytest.mark.anyio

BUGGY = "PASS_MARK = 50\n\n\ndef passed(score):\n    return score > PASS_MARK\n"
FIXED = BUGGY.replace("score > PASS_MARK", "score >= PASS_MARK")
STILL_WRONG = BUGGY.replace("score > PASS_MARK", "score > PASS_MARK - 0")
TEST = "from grades import passed\n\n\ndef test_passed():\n    assert passed(50)\n"
PYTHON = Path(sys.executable).parent  # `python -m pytest` finds pytest here
WHOLE = '[providers.openai.models."qwen"]\ncontext_window = 8192\nedit_format = "whole_file"\n'
ALLOW = "allow_once"


def listing(content: str) -> str:
    return f"The comparison must include the pass mark.\n\ngrades.py\n```python\n{content}```\n"


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "grades.py").write_text(BUGGY)
    (root / "test_grades.py").write_text(TEST)
    return root


def attached(root: Path) -> list[Any]:
    """The prompt an editor sends with both files @-mentioned."""
    return [
        text_block("The tests fail. Fix the bug."),
        *(
            resource_block(embedded_text_resource((root / n).as_uri(), (root / n).read_text()))
            for n in ("grades.py", "test_grades.py")
        ),
    ]


def agent_env(tmp_path: Path, server: FakeServer, config: str) -> dict[str, str]:
    env = environment(tmp_path, server, config)
    return {**env, "PATH": f"{PYTHON}{os.pathsep}{os.environ['PATH']}"}


def calls_by_kind(client: ToolClient) -> dict[str, list[Any]]:
    """The final state of each tool call, grouped by kind."""
    latest: dict[str, dict[str, Any]] = {}
    for update in updates_of(client, "tool_call") + updates_of(client, "tool_call_update"):
        entry = latest.setdefault(update.tool_call_id, {"content": []})
        for name in ("kind", "status", "title"):
            if getattr(update, name, None) is not None:
                entry[name] = getattr(update, name)
        entry["content"].extend(getattr(update, "content", None) or ())
    grouped: dict[str, list[Any]] = {}
    for entry in latest.values():
        grouped.setdefault(entry.get("kind", "other"), []).append(entry)
    return grouped


async def test_a_whole_file_answer_is_applied_shown_tested_and_rewound(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    data = tmp_path / "data"
    client = ToolClient([ALLOW, ALLOW])  # the edit, then the test run
    async with serve(text_reply(listing(FIXED))) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(data))
        async with running_agent(*args, env=agent_env(tmp_path, server, WHOLE), client=client) as (
            conn,
            *_,
        ):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
            assert response.stop_reason == "end_turn"
            assert (root / "grades.py").read_text() == FIXED
            assert (root / "test_grades.py").read_text() == TEST
            [body] = chat_bodies(server)  # one request: the answer was the fix
            rewound = await conn.prompt(session_id=sid, prompt=[text_block("/rewind 1")])
    assert rewound.stop_reason == "end_turn"
    assert (root / "grades.py").read_text() == BUGGY  # the edit was checkpointed
    assert body["temperature"] == 0
    assert body["messages"][0]["content"].startswith(WHOLE_FILE_PROMPT)
    assert "tools" not in body  # nothing to call: the changes come as text
    prompt = body["messages"][1]["content"]
    assert f"grades.py\n```\n{BUGGY}```" in prompt and "<resource" not in prompt
    assert prompt.endswith(FORMAT_REMINDERS["whole_file"])
    kinds = calls_by_kind(client)
    [edit] = kinds["edit"]
    assert edit["status"] == "completed"
    [diff] = [c for c in edit["content"] if getattr(c, "type", None) == "diff"]
    assert diff.new_text == FIXED and diff.old_text == BUGGY
    [run] = kinds["execute"]
    assert run["status"] == "completed" and "python -m pytest -q" in run["title"]
    assert client.asked_titles[0] == "Write grades.py"
    assert client.asked_titles[1].startswith("Run `python -m pytest -q`")
    notes = [u.content.text for u in updates_of(client, "agent_message_chunk") if u.field_meta]
    assert any("Running the tests" in note and "test_*.py files" in note for note in notes)
    journal = (data / "sessions" / f"{sid}.jsonl").read_text().replace(" ", "")
    assert '"edit_block":true' in journal and '"checkpoints"' in journal


async def test_a_failure_goes_back_to_the_model_and_its_next_answer_is_tested(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    client = ToolClient([ALLOW] * 4)
    replies = (text_reply(listing(STILL_WRONG)), text_reply(listing(FIXED)))
    async with serve(*replies) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=agent_env(tmp_path, server, WHOLE), client=client) as (
            conn,
            *_,
        ):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
    assert response.stop_reason == "end_turn"
    assert (root / "grades.py").read_text() == FIXED
    first, second = chat_bodies(server)
    messages = second["messages"][len(first["messages"]) :]
    # What the model wrote, as it wrote it; what the edit did; what the tests said. No tool
    # call or result of the agent's own test run.
    assert [m["role"] for m in messages] == ["assistant", "user", "user"]
    assert messages[0]["content"] == listing(STILL_WRONG) and "tool_calls" not in messages[0]
    assert messages[1]["content"].startswith("[Write grades.py: done] Overwrote ")
    assert messages[2]["content"].startswith("The tests fail after your changes.")
    assert "1 failed" in messages[2]["content"]
    runs = calls_by_kind(client)["execute"]
    assert [r["status"] for r in runs] == ["failed", "completed"]


NEEDS_A_SERVER = (
    "import socket\n\nfrom grades import passed\n\n\ndef test_passed():\n"
    '    socket.create_connection(("127.0.0.1", 9), timeout=5).close()\n'
    "    assert passed(50)\n"
)


@needs_bwrap
async def test_a_failing_run_with_the_sandbox_note_goes_back_to_the_model(
    tmp_path: Path,
) -> None:
    """In sandboxed mode a run whose output reads as a refused connection gets the sandbox's
    note after its exit code: it ran and failed all the same, and the model is told."""
    root = workspace(tmp_path)
    (root / "test_grades.py").write_text(NEEDS_A_SERVER)
    client = ToolClient([ALLOW] * 6)
    config = WHOLE + "\n[tests]\nmax_rounds = 2\n"
    replies = (text_reply(listing(STILL_WRONG)), text_reply(listing(FIXED)))
    async with serve(*replies) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        args += ("--mode", "sandboxed")
        async with running_agent(*args, env=agent_env(tmp_path, server, config), client=client) as (
            conn,
            *_,
        ):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
    assert response.stop_reason == "end_turn"
    first, second = chat_bodies(server)
    told = second["messages"][len(first["messages"]) + 2]["content"]
    assert told.startswith("The tests fail after your changes.")
    assert "Connection refused" in told and "[exit code: 1]\n[the sandbox has no network" in told
    runs = calls_by_kind(client)["execute"]
    assert [r["status"] for r in runs] == ["failed", "failed"]


async def test_the_test_runs_stop_at_max_rounds_and_the_last_failure_is_not_sent(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    client = ToolClient([ALLOW] * 6)
    config = WHOLE + "\n[tests]\nmax_rounds = 2\n"
    wrong = [BUGGY.replace("PASS_MARK\n", f"PASS_MARK + {n} * 0\n") for n in range(3)]
    replies = [text_reply(listing(content)) for content in wrong]  # each a change, each wrong
    async with serve(*replies) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=agent_env(tmp_path, server, config), client=client) as (
            conn,
            *_,
        ):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
    assert response.stop_reason == "end_turn"
    assert len(chat_bodies(server)) == 2
    assert len(calls_by_kind(client)["execute"]) == 2
    notes = [u.content.text for u in updates_of(client, "agent_message_chunk") if u.field_meta]
    assert any("still fail after 2 run(s)" in note for note in notes)


async def test_an_unreadable_block_is_told_to_the_model_like_a_malformed_call(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    client = ToolClient([ALLOW] * 4)
    pathless = f"Here is the fix:\n```python\n{FIXED}```\n"
    async with serve(text_reply(pathless), text_reply(listing(FIXED))) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=agent_env(tmp_path, server, WHOLE), client=client) as (
            conn,
            *_,
        ):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
    assert response.stop_reason == "end_turn"
    assert (root / "grades.py").read_text() == FIXED
    first, second = chat_bodies(server)
    note = second["messages"][len(first["messages"]) + 1]
    assert note["role"] == "user"
    assert "an edit block of your answer could not be read" in note["content"]
    assert "without a file path" in note["content"] and "JSON" not in note["content"]
    failed = [c for c in calls_by_kind(client)["edit"] if c["status"] == "failed"]
    assert len(failed) == 1
    assert client.asked_titles[0] == "Write grades.py"  # nobody was asked about the bad block


async def test_a_search_replace_block_goes_through_edit_file(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    client = ToolClient([ALLOW] * 2)
    config = WHOLE.replace('"whole_file"', '"search_replace"')
    block = (
        "grades.py\n<<<<<<< SEARCH\n    return score > PASS_MARK\n=======\n"
        "    return score >= PASS_MARK\n>>>>>>> REPLACE\n"
    )
    async with serve(text_reply(block)) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=agent_env(tmp_path, server, config), client=client) as (
            conn,
            *_,
        ):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
    assert response.stop_reason == "end_turn"
    assert (root / "grades.py").read_text() == FIXED
    [body] = chat_bodies(server)
    assert body["messages"][0]["content"].startswith(SEARCH_REPLACE_PROMPT)
    assert client.asked_titles[0] == "Edit grades.py"
    assert client.asked_titles[1].startswith("Run `python -m pytest -q`")


async def test_an_empty_search_for_an_existing_file_is_told_to_the_model_not_applied(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    client = ToolClient([ALLOW] * 2)
    config = WHOLE.replace('"whole_file"', '"search_replace"')
    overwrite = "grades.py\n<<<<<<< SEARCH\n=======\nPASS_MARK = 40\n>>>>>>> REPLACE\n"
    block = (
        "grades.py\n<<<<<<< SEARCH\n    return score > PASS_MARK\n=======\n"
        "    return score >= PASS_MARK\n>>>>>>> REPLACE\n"
    )
    async with serve(text_reply(overwrite), text_reply(block)) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=agent_env(tmp_path, server, config), client=client) as (
            conn,
            *_,
        ):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
    assert response.stop_reason == "end_turn"
    assert (root / "grades.py").read_text() == FIXED  # not replaced whole by the first answer
    first, second = chat_bodies(server)
    note = second["messages"][len(first["messages"]) + 1]["content"]
    assert "an edit block of your answer could not be read (for grades.py)" in note
    assert "SEARCH section is empty, but grades.py exists" in note
    assert "an empty SEARCH only creates a new file" in note
    edits = calls_by_kind(client)["edit"]
    assert [e["status"] for e in edits] == ["failed", "completed"]
    assert client.asked_titles[0] == "Edit grades.py"  # nobody was asked about the bad block


async def test_a_cancel_during_the_test_run_ends_the_turn_and_kills_the_command(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    marker = tmp_path / "test-started"
    config = WHOLE + f'\n[tests]\ncommand = "touch {marker} && sleep 60"\n'
    client = ToolClient([ALLOW] * 2)
    async with serve(text_reply(listing(FIXED))) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=agent_env(tmp_path, server, config), client=client) as (
            conn,
            process,
            _,
            _,
        ):
            sid = await start(conn, root)
            outcome: dict[str, Any] = {}

            async def prompt() -> None:
                outcome["response"] = await conn.prompt(session_id=sid, prompt=attached(root))

            async with anyio.create_task_group() as group:
                group.start_soon(prompt)
                with anyio.fail_after(60):
                    # Another process makes the file: there is no event to wait on.
                    while not marker.exists():  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                await conn.cancel(session_id=sid)
            # The agent's watchdog is its child for the agent's life (process/watchdog.py).
            survivors = sorted(set(children(process.pid)) - set(watchdogs(process.pid)))
    assert outcome["response"].stop_reason == "cancelled"
    assert survivors == []  # the shell and its sleep were killed before the answer
    assert len(chat_bodies(server)) == 1
    [run] = calls_by_kind(client)["execute"]
    assert run["status"] == "failed"


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


async def test_a_tool_call_model_runs_no_tests_unless_configured_and_is_told_the_command(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    client = ToolClient([ALLOW])
    edit = json.dumps(
        {"path": "grades.py", "old_text": "score > PASS_MARK", "new_text": "score >= PASS_MARK"}
    )
    async with serve(tool_call("call_1", "edit_file", edit), text_reply("Fixed.")) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        config = "[providers.openai]\ncontext_window = 8192\n"
        async with running_agent(*args, env=agent_env(tmp_path, server, config), client=client) as (
            conn,
            *_,
        ):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
    assert response.stop_reason == "end_turn"
    assert (root / "grades.py").read_text() == FIXED
    assert "execute" not in calls_by_kind(client)  # auto_test is off for tool calls
    system = chat_bodies(server)[0]["messages"][0]["content"]
    assert "Tests: python -m pytest -q (from test_*.py files)" in system
    assert "temperature" not in chat_bodies(server)[0]


def as_shown(updates: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """What a client holds once it applied `updates`, by id in the order each first showed:
    each agent message (its text, and the agent's own mark) and each tool call (a member of an
    update replaces the one before; display terminals left out: live only, on v2)."""
    shown: dict[str, dict[str, Any]] = {}
    for update in updates:
        kind = update["sessionUpdate"]
        if kind == "agent_message_chunk":
            message = shown.setdefault(update["messageId"], {"text": "", "_meta": None})
            message["text"] += update["content"]["text"]
            message["_meta"] = update.get("_meta")
        elif kind in ("tool_call", "tool_call_update"):
            call = shown.setdefault(update["toolCallId"], {})
            call.update({k: v for k, v in update.items() if k != "sessionUpdate"})
            if "content" in update:
                call["content"] = [c for c in update["content"] if c["type"] != "terminal"]
    return list(shown.items())


def wire_updates(frames: Any) -> list[dict[str, Any]]:
    return [f["params"]["update"] for f in frames.received if f.get("method") == "session/update"]


async def test_a_whole_file_turn_replays_on_v1_as_it_was_shown_live(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    client = ToolClient([ALLOW, ALLOW])
    async with serve(text_reply(listing(FIXED))) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        env = agent_env(tmp_path, server, WHOLE)
        async with running_agent(*args, env=env, client=client) as (conn, _, frames, _):
            sid = await start(conn, root)
            response = await conn.prompt(session_id=sid, prompt=attached(root))
        async with running_agent(*args, env=env) as (conn, _, replayed, _):
            await conn.initialize(protocol_version=1)
            await conn.load_session(session_id=sid, cwd=str(root), mcp_servers=[])
    assert response.stop_reason == "end_turn"
    live = as_shown(wire_updates(frames))
    assert as_shown(wire_updates(replayed)) == live
    # What was shown live: the answer, its edit, the agent's note and its test run.
    [(_, answer), (_, edit), (_, note), (_, run)] = live
    assert answer == {"text": listing(FIXED), "_meta": None}
    assert (edit["title"], edit["kind"], edit["status"]) == ("Write grades.py", "edit", "completed")
    grades = str((root / "grades.py").resolve())
    diff = {"type": "diff", "path": grades, "oldText": BUGGY, "newText": FIXED}
    assert diff in edit["content"] and edit["locations"] == [{"path": grades}]
    assert note["_meta"] == {"acp-server": {"origin": "agent"}}
    assert note["text"].startswith("Running the tests after the edits")
    assert (run["title"], run["kind"], run["status"]) == (
        "Run `python -m pytest -q`",
        "execute",
        "completed",
    )
    assert run["content"][-1]["content"]["text"].endswith("[exit code: 0]")
    prompts = [u for u in wire_updates(replayed) if u["sessionUpdate"] == "user_message_chunk"]
    assert prompts[0]["content"]["text"] == "The tests fail. Fix the bug."


async def test_a_whole_file_turn_replays_on_v2_as_it_was_shown_live(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    async with serve(text_reply(listing(FIXED))) as server:
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        args += ("--mode", "bypass")  # nobody to ask: the raw client answers no permission
        env = {**agent_env(tmp_path, server, WHOLE), **SANDBOXED}
        async with raw_agent(*args, env=env, validate=validate_agent_frame_v2) as client:
            sid = await new_session_v2(client, str(root))
            prompt = {"sessionId": sid, "prompt": text("The tests fail. Fix the bug.")}
            await client.call("session/prompt", prompt)
            await client.wait_for(
                lambda f: (f.get("params") or {}).get("update", {}).get("state") == "idle"
            )
            live = as_shown(client.updates(sid))
        async with raw_agent(*args, env=env, validate=validate_agent_frame_v2) as client:
            await client.call(
                "initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}
            )
            reopen = {"sessionId": sid, "cwd": str(root), "replayFrom": {"type": "start"}}
            await client.call("session/resume", reopen)
            replayed = as_shown(client.updates(sid))
    assert (root / "grades.py").read_text() == FIXED
    assert replayed == live
    [(_, answer), (_, edit), (_, note), (_, run)] = live
    assert answer["text"] == listing(FIXED) and note["text"].startswith("Running the tests")
    assert (edit["title"], edit["kind"], edit["status"]) == ("Write grades.py", "edit", "completed")
    [diff] = [c for c in edit["content"] if c["type"] == "diff"]
    assert "+    return score >= PASS_MARK" in diff["patch"]["text"]
    assert (run["kind"], run["status"]) == ("execute", "completed")
