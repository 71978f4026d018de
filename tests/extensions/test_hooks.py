"""Hooks in process: real `sh -c` hooks on a real agent runtime with a scripted model.

Covers the hooks file (loading, invalid files), each event's answers (block, context, deny,
post-tool observation, stop continuation), failures that must not block (timeouts, non-zero
exits, bad output), the consent for workspace hooks, and the cancel that must reach a running
hook's process group before the turn ends.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.agent.inbox import Blocked
from acp_server.cancellation import TurnSignal
from acp_server.extensions.hooks import (
    DEFAULT_TIMEOUT_MS,
    Hook,
    HookEvent,
    SessionHooks,
    Source,
    load_hooks,
    load_hooks_file,
    user_hooks_path,
    workspace_hooks_path,
)
from acp_server.session import records as rec
from acp_server.tools.base import ToolOutput
from tests.support.agent_harness import (
    FakeModel,
    FakeTool,
    call,
    finish,
    of_type,
    request_user_texts,
    running_agent,
    say,
    text,
    turn_ends,
    user_texts,
)
from tests.support.backends import anyio_backend  # noqa: F401 - on asyncio and trio
from tests.support.processes import alive

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc: Linux only"),
    pytest.mark.usefixtures("module_subreaper"),  # orphaned hook children are reaped by us
]

LOGGER = "acp_server.extensions.hooks"


def hook(
    event: HookEvent,
    command: str,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    source: Source = "user",
    tools: list[str] | None = None,
    path: str = "/test/hooks.json",
) -> Hook:
    return Hook(
        event, command, timeout_ms, source, path, None if tools is None else frozenset(tools)
    )


def session_hooks(tmp_path: Path, *hooks: Hook, **kwargs: Any) -> SessionHooks:
    return SessionHooks(list(hooks), session_id="s1", cwd=str(tmp_path), grace=0.5, **kwargs)


HANG_GUARD_S = 60.0
"""A guard against a hang only; no test here measures speed."""


async def wait_for_pids(path: Path, count: int) -> list[int]:
    with anyio.fail_after(HANG_GUARD_S):
        while True:
            if await anyio.Path(path).exists():
                pids = [int(x) for x in (await anyio.Path(path).read_text()).split()]
                if len(pids) >= count:
                    return pids
            await anyio.sleep(0.01)


def payloads(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- the hooks file


def test_hook_files_are_found_in_the_workspace_and_under_xdg_config(tmp_path: Path) -> None:
    config = tmp_path / "config"
    ws = tmp_path / "ws"
    (config / "acp-server").mkdir(parents=True)
    (ws / ".acp-server").mkdir(parents=True)
    env = {"XDG_CONFIG_HOME": str(config)}
    assert user_hooks_path(env) == config / "acp-server" / "hooks.json"
    assert user_hooks_path({}) == Path.home() / ".config" / "acp-server" / "hooks.json"
    assert workspace_hooks_path(str(ws)) == ws / ".acp-server" / "hooks.json"
    (config / "acp-server" / "hooks.json").write_text(
        json.dumps({"hooks": {"stop": [{"command": "true"}]}})
    )
    (ws / ".acp-server" / "hooks.json").write_text(
        json.dumps(
            {"hooks": {"pre_tool": [{"command": "false", "tools": ["bash"], "timeout_ms": 5}]}}
        )
    )
    hooks = load_hooks(str(ws), env)
    assert [(h.source, h.event, h.command, h.timeout_ms, h.tools) for h in hooks] == [
        ("user", "stop", "true", DEFAULT_TIMEOUT_MS, None),
        ("workspace", "pre_tool", "false", 5, frozenset({"bash"})),
    ]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "invalid JSON: JSON is malformed"),
        ("[]", "Expected `object`, got `array`"),
        ('{"hooks": []}', "Expected `object`, got `array` - at `$.hooks`"),
        ('{"hooks": {"pre-tool": []}}', "unknown field `pre-tool` - at `$.hooks`"),
        ('{"hooks": {}, "hook": {}}', "unknown field `hook`"),
        ('{"hooks": {"stop": [{"command": ""}]}}', "`command` is empty - at `$.hooks.stop[0]`"),
        ('{"hooks": {"stop": [{"command": " "}]}}', "`command` is empty - at `$.hooks.stop[0]`"),
        ('{"hooks": {"stop": [{"command": 1}]}}', "got `int` - at `$.hooks.stop[0].command`"),
        (
            '{"hooks": {"stop": [{"command": "x", "timeout_ms": -1}]}}',
            "Expected `int` >= 1 - at `$.hooks.stop[0].timeout_ms`",
        ),
        (
            '{"hooks": {"stop": [{"command": "x", "timeout_ms": true}]}}',
            "got `bool` - at `$.hooks.stop[0].timeout_ms`",
        ),
        (
            '{"hooks": {"stop": [{"command": "x", "tools": ["bash"]}]}}',
            "unknown field `tools` - at `$.hooks.stop[0]`",
        ),
        (
            '{"hooks": {"pre_tool": [{"command": "x", "tools": ["bash", 3]}]}}',
            "got `int` - at `$.hooks.pre_tool[0].tools[1]`",
        ),
        (
            '{"hooks": {"post_tool": [{"command": "x", "tools": null}]}}',
            "got `null` - at `$.hooks.post_tool[0].tools`",
        ),
        (
            '{"hooks": {"stop": [{"command": "x", "typo": 1}]}}',
            "unknown field `typo` - at `$.hooks.stop[0]`",
        ),
    ],
)
def test_an_invalid_hooks_file_is_reported_with_the_fields_path_and_ignored(
    tmp_path: Path, content: str, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(content)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert load_hooks_file(path, "workspace") == []
    assert f"ignoring the workspace hooks file {path}: " in caplog.text
    assert why in caplog.text


def test_every_event_and_field_of_a_hooks_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    entry = {"command": "c", "timeout_ms": 7}
    tool_entry = {**entry, "tools": ["read_file"]}
    events = {"prompt_submit": [entry], "pre_tool": [tool_entry], "post_tool": [entry]}
    path.write_text(json.dumps({"hooks": {**events, "stop": [entry, {"command": "d"}]}}))
    hooks = load_hooks_file(path, "user")
    assert [(h.event, h.command, h.timeout_ms, h.tools) for h in hooks] == [
        ("prompt_submit", "c", 7, None),
        ("pre_tool", "c", 7, frozenset({"read_file"})),
        ("post_tool", "c", 7, None),
        ("stop", "c", 7, None),
        ("stop", "d", DEFAULT_TIMEOUT_MS, None),
    ]
    assert {(h.source, h.path) for h in hooks} == {("user", str(path))}


def test_a_missing_hooks_file_is_no_hooks(tmp_path: Path) -> None:
    assert load_hooks(str(tmp_path), {"XDG_CONFIG_HOME": str(tmp_path / "none")}) == []


# --------------------------------------------------------------------------- cancellation


async def test_cancel_kills_and_reaps_a_running_prompt_submit_hook_before_the_turn_ends(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pids"
    command = f'sleep 300 & echo $$ $! > "{pidfile}.tmp" && mv "{pidfile}.tmp" "{pidfile}"; wait'
    model = FakeModel()
    hooks = session_hooks(tmp_path, hook("prompt_submit", command))
    async with running_agent(model) as handle:
        hooks.install(handle.agent)
        ticket = handle.agent.followup(text("go"))
        pids = await wait_for_pids(pidfile, 2)
        assert all(alive(pid) for pid in pids)
        handle.agent.cancel()
        await handle.agent.when_idle()
        assert [pid for pid in pids if alive(pid)] == []
        assert await ticket.wait() == rec.Aborted()
        assert model.requests == []
        assert of_type(handle.agent.session, rec.TurnStart) == []
        assert list(handle.agent.session.records) == []


async def test_a_hook_started_after_the_turn_was_cancelled_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    model = FakeModel()
    async with running_agent(model) as handle:

        async def cancel_in_consent(path: str, signal: TurnSignal, changed: Sequence[str]) -> bool:
            handle.agent.cancel()
            return True

        hooks = session_hooks(
            tmp_path,
            hook("prompt_submit", "true"),
            hook("prompt_submit", f"touch {marker}", source="workspace"),
            consent=cancel_in_consent,
        )
        hooks.install(handle.agent)
        ticket = handle.agent.followup(text("go"))
        assert await ticket.wait() == rec.Aborted()
    assert not marker.exists()
    assert hooks.workspace_allowed is None  # a cancelled question decides nothing
    assert model.requests == []


# --------------------------------------------------------------------------- prompt_submit


async def test_prompt_submit_hook_gets_the_payload_and_adds_context(tmp_path: Path) -> None:
    seen = tmp_path / "payload.json"
    command = f'cat >> "{seen}"; echo; echo \'{{"context": "from the hook"}}\''
    hooks = session_hooks(tmp_path, hook("prompt_submit", f"{command}"))
    model = FakeModel()
    async with running_agent(model) as handle:
        hooks.install(handle.agent)
        assert await handle.agent.followup(text("hello")).wait() == rec.Completed()
        assert user_texts(handle.agent.session, "context") == ["from the hook"]
        assert request_user_texts(model.requests[0]) == ["hello", "from the hook"]
    assert payloads(seen) == [
        {"event": "prompt_submit", "session_id": "s1", "cwd": str(tmp_path), "prompt": "hello"}
    ]


async def test_a_blocking_prompt_submit_hook_blocks_the_turn_and_says_which_hook(
    tmp_path: Path,
) -> None:
    after = tmp_path / "after"
    told: list[str] = []

    async def notify(message: str) -> None:
        told.append(message)

    block = 'echo \'{"decision": "block", "reason": "no secrets"}\''
    hooks = session_hooks(
        tmp_path,
        hook("prompt_submit", block),
        hook("prompt_submit", f"touch {after}"),
        notify=notify,
    )
    model = FakeModel()
    async with running_agent(model) as handle:
        hooks.install(handle.agent)
        result = await handle.agent.followup(text("go")).wait()
        assert isinstance(result, Blocked)
        assert "no secrets" in result.reason
        assert repr(block) in result.reason and "user prompt_submit hook" in result.reason
        assert told == [result.reason]
        assert model.requests == []
        assert of_type(handle.agent.session, rec.TurnStart) == []
    assert not after.exists()  # a decision ends the run of that event's hooks


# --------------------------------------------------------------------------- tools


async def test_a_pre_tool_hook_denies_a_call_with_its_reason_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    seen = tmp_path / "pre.json"
    deny = f'cat >> "{seen}"; echo; echo \'{{"decision": "deny", "reason": "not today"}}\''
    probe = FakeTool("probe")
    other = FakeTool("other")
    model = FakeModel(
        [call("probe", x=1), finish("tool_calls")],
        [call("other"), finish("tool_calls")],
        [say("finished"), finish()],
    )
    hooks = session_hooks(tmp_path, hook("pre_tool", deny, tools=["probe"]))
    async with running_agent(model, tools=[probe, other]) as handle:
        hooks.install(handle.agent)
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
        results = of_type(handle.agent.session, rec.ToolResult)
    assert probe.runs == [] and other.runs == [{}]  # the filter: only `probe` is denied
    assert results[0].status == "failed"
    assert results[0].output.startswith("denied: not today (denied by the user pre_tool hook")
    assert results[1].status == "completed"
    assert len(model.requests) == 3
    [payload] = payloads(seen)
    assert payload["event"] == "pre_tool" and payload["tool"] == "probe"
    assert payload["arguments"] == {"x": 1}


async def test_a_post_tool_hook_sees_the_output(tmp_path: Path) -> None:
    seen = tmp_path / "post.json"

    async def behaviour(arguments: Any, signal: TurnSignal) -> ToolOutput:
        return ToolOutput("the tool's output")

    model = FakeModel([call("probe", y="z"), finish("tool_calls")])
    hooks = session_hooks(tmp_path, hook("post_tool", f'cat >> "{seen}"; echo'))
    async with running_agent(model, tools=[FakeTool("probe", behaviour)]) as handle:
        hooks.install(handle.agent)
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    [payload] = payloads(seen)
    assert payload["event"] == "post_tool"
    assert payload["tool"] == "probe" and payload["arguments"] == {"y": "z"}
    assert payload["output"] == "the tool's output" and payload["failed"] is False


async def test_a_post_tool_hook_context_is_injected_before_the_next_request(
    tmp_path: Path,
) -> None:
    async def behaviour(arguments: Any, signal: TurnSignal) -> ToolOutput:
        return ToolOutput("the tool's output")

    model = FakeModel([call("probe"), finish("tool_calls")], [say("done"), finish()])
    answer = '{"context": "lint found 2 warnings"}'
    hooks = session_hooks(tmp_path, hook("post_tool", f"cat > /dev/null; echo '{answer}'"))
    async with running_agent(model, tools=[FakeTool("probe", behaviour)]) as handle:
        hooks.install(handle.agent)
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
        # Injected context wakes nothing by itself: it rides along with the step the tool
        # result already owed, and lands after the result (results stay next to their calls).
        assert len(model.requests) == 2
        assert user_texts(handle.agent.session, "context") == ["lint found 2 warnings"]
        assert request_user_texts(model.requests[1])[-1] == "lint found 2 warnings"


# --------------------------------------------------------------------------- stop


async def test_a_stop_hook_gets_one_more_step_per_turn_with_its_reason_as_steering(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen = tmp_path / "stop.json"
    command = (
        f'cat >> "{seen}"; echo >> "{seen}"; '
        'echo \'{"decision": "continue", "reason": "also run the tests"}\''
    )
    model = FakeModel([say("first answer"), finish()], [say("second answer"), finish()])
    hooks = session_hooks(tmp_path, hook("stop", command))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        async with running_agent(model) as handle:
            hooks.install(handle.agent)
            assert await handle.agent.followup(text("go")).wait() == rec.Completed()
            assert len(model.requests) == 2
            assert user_texts(handle.agent.session, "steering") == ["also run the tests"]
            assert request_user_texts(model.requests[1])[-1] == "also run the tests"
            # The next turn gets its own extra step.
            assert await handle.agent.followup(text("again")).wait() == rec.Completed()
            assert len(model.requests) == 4
    stops = payloads(seen)
    assert [(p["last_text"], p["continued"]) for p in stops] == [
        ("first answer", False),
        ("second answer", True),
        ("done", False),
        ("done", True),
    ]
    assert "already had its extra step" in caplog.text


# --------------------------------------------------------------------------- failing hooks


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("echo broken >&2; exit 3", "failed (exit code 3): broken"),
        ("echo not json", "printed invalid JSON"),
        ("echo '[1]'", "printed JSON that is not an object"),
        ("kill -9 $$", "failed (signal 9)"),
    ],
    ids=["exit-code", "invalid-json", "not-an-object", "killed"],
)
async def test_a_failing_hook_is_reported_and_does_not_block(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, command: str, why: str
) -> None:
    model = FakeModel([call("probe"), finish("tool_calls")])
    probe = FakeTool("probe")
    events: tuple[HookEvent, ...] = ("prompt_submit", "pre_tool", "post_tool", "stop")
    hooks = session_hooks(tmp_path, *(hook(event, command) for event in events))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        async with running_agent(model, tools=[probe]) as handle:
            hooks.install(handle.agent)
            assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert probe.runs == [{}]
    for event in events:
        assert f"the user {event} hook {command!r} (/test/hooks.json) {why}" in caplog.text


async def test_a_hook_that_cannot_start_is_reported_and_does_not_block(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hooks = SessionHooks(
        [hook("prompt_submit", "true")], session_id="s1", cwd=str(tmp_path / "missing")
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        async with running_agent(FakeModel()) as handle:
            hooks.install(handle.agent)
            assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert "could not run" in caplog.text


async def test_a_hook_timeout_is_reported_reaped_and_does_not_block(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pidfile = tmp_path / "pids"
    command = f'sleep 300 & echo $$ $! > "{pidfile}.tmp" && mv "{pidfile}.tmp" "{pidfile}"; wait'
    model = FakeModel()
    hooks = session_hooks(tmp_path, hook("prompt_submit", command, timeout_ms=300))
    # The hook would run 300 s: the turn completing at all shows the timeout ended it.
    with caplog.at_level(logging.WARNING, logger=LOGGER), anyio.fail_after(HANG_GUARD_S):
        async with running_agent(model) as handle:
            hooks.install(handle.agent)
            assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert len(model.requests) == 1
    assert "user prompt_submit hook" in caplog.text and "timed out after 300 ms" in caplog.text
    assert [pid for pid in await wait_for_pids(pidfile, 2) if alive(pid)] == []


# --------------------------------------------------------------------------- workspace consent


@pytest.mark.parametrize("allow", [True, False], ids=["allowed", "denied"])
async def test_workspace_hooks_run_only_once_allowed_and_user_hooks_never_ask(
    tmp_path: Path, allow: bool
) -> None:
    user_ran, workspace_ran = tmp_path / "user", tmp_path / "workspace"
    asked: list[str] = []

    async def consent(path: str, signal: TurnSignal, changed: Sequence[str]) -> bool:
        asked.append(path)
        return allow

    hooks = session_hooks(
        tmp_path,
        hook("prompt_submit", f"echo x >> {user_ran}"),
        hook("prompt_submit", f"echo x >> {workspace_ran}", source="workspace", path="/ws/h"),
        consent=consent,
    )
    async with running_agent(FakeModel()) as handle:
        hooks.install(handle.agent)
        for _ in range(2):
            assert await handle.agent.followup(text("go")).wait() == rec.Completed()
        assert len(turn_ends(handle.agent.session)) == 2
    assert asked == ["/ws/h"]  # asked once per session, before the first workspace hook
    assert user_ran.read_text() == "x\nx\n"
    assert workspace_ran.exists() is allow
    if allow:
        assert workspace_ran.read_text() == "x\nx\n"


async def test_user_hooks_alone_never_ask(tmp_path: Path) -> None:
    asked: list[str] = []

    async def consent(path: str, signal: TurnSignal, changed: Sequence[str]) -> bool:
        asked.append(path)
        return True

    hooks = session_hooks(tmp_path, hook("prompt_submit", "true"), consent=consent)
    async with running_agent(FakeModel()) as handle:
        hooks.install(handle.agent)
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert asked == []


async def test_without_a_consent_callback_workspace_hooks_are_skipped(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hooks = session_hooks(tmp_path, hook("prompt_submit", f"touch {marker}", source="workspace"))
    async with running_agent(FakeModel()) as handle:
        hooks.install(handle.agent)
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert not marker.exists()


async def test_consent_holds_for_the_content_it_was_given_for(tmp_path: Path) -> None:
    """The hooks file or a script its command names, changed after the consent, is asked
    about again (naming what changed) before the next workspace hook runs; an unchanged one
    and a file the hook only writes to are not."""
    hooks_file, script_file = tmp_path / "hooks.json", tmp_path / "lint.sh"
    hooks_file.write_text("{}")
    script_file.write_text("echo v1 >> ran\n")
    asked: list[list[str]] = []

    async def consent(path: str, signal: TurnSignal, changed: Sequence[str]) -> bool:
        asked.append(list(changed))
        return True

    command = "sh ./lint.sh > out.txt"  # out.txt is written by every run
    hooks = session_hooks(
        tmp_path,
        hook("prompt_submit", command, source="workspace", path=str(hooks_file)),
        consent=consent,
    )
    async with running_agent(FakeModel()) as handle:
        hooks.install(handle.agent)
        for change in (None, None, script_file, hooks_file):
            if change is not None:
                change.write_text(change.read_text() + "\n# changed\n")
            assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert asked == [[], [str(tmp_path / "lint.sh")], [str(hooks_file)]]
    assert (tmp_path / "ran").read_text() == "v1\n" * 4


@pytest.mark.parametrize("allow", [True, False], ids=["allowed", "refused"])
async def test_a_user_hook_whose_workspace_script_changed_asks_first(
    tmp_path: Path, allow: bool
) -> None:
    """User hooks never ask, unless a file their command names changed since the session
    started (a sandboxed command may write the workspace script a user hook runs)."""
    script_file = tmp_path / "fmt.sh"
    script_file.write_text("echo v1 >> ran\n")
    asked: list[list[str]] = []

    async def consent(path: str, signal: TurnSignal, changed: Sequence[str]) -> bool:
        asked.append(list(changed))
        return allow

    hooks = session_hooks(tmp_path, hook("prompt_submit", "sh fmt.sh"), consent=consent)
    async with running_agent(FakeModel()) as handle:
        hooks.install(handle.agent)
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
        script_file.write_text("echo v2 >> ran\n")
        for _ in range(2):
            assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert asked == [[str(script_file)]]  # once, after the change, naming the file
    assert (tmp_path / "ran").read_text() == ("v1\nv2\nv2\n" if allow else "v1\n")


def test_a_hooks_file_that_is_a_fifo_or_endless_is_ignored_without_blocking(tmp_path: Path) -> None:
    # Moved from tests/tools/test_local_files.py: it is the hooks loader's use of the safe open.
    hooks_dir = tmp_path / ".acp-server"
    hooks_dir.mkdir()
    os.mkfifo(hooks_dir / "hooks.json")  # no writer: an ordinary read blocks forever
    assert load_hooks_file(hooks_dir / "hooks.json", "workspace") == []
    os.unlink(hooks_dir / "hooks.json")
    (hooks_dir / "hooks.json").symlink_to("/dev/zero")  # endless: an ordinary read fills memory
    assert load_hooks_file(hooks_dir / "hooks.json", "workspace") == []
    os.unlink(hooks_dir / "hooks.json")
    (hooks_dir / "hooks.json").write_text(" " * (2 << 20) + "{}")
    assert load_hooks_file(hooks_dir / "hooks.json", "workspace") == []
