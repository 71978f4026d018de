"""The version a connection speaks, chosen by its first `initialize`, and v2's handshake and
authentication, against the real process with raw frames (every frame checked: v1's schema on
a v1 connection, v2's on a v2 one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.raw_client import RawClient, new_session_v2, raw_agent, text
from tests.support.wire import validate_agent_frame
from tests.support.wire_v2 import validate_agent_frame_v2

pytestmark = pytest.mark.anyio

INFO = {"name": "pytest", "version": "1"}


def v2(protocol_version: Any = 2, **extra: Any) -> dict[str, Any]:
    return {"protocolVersion": protocol_version, "info": INFO, "capabilities": {}, **extra}


def either(frame: dict[str, Any], method: str | None) -> None:
    """Before the version is chosen a frame may be either version's: valid as one of them."""
    try:
        validate_agent_frame_v2(frame, method)
    except AssertionError:
        validate_agent_frame(frame, method)


async def test_version_2_is_answered_2_with_info_capabilities_and_auth_methods() -> None:
    async with raw_agent("--model", "echo", validate=validate_agent_frame_v2) as client:
        answer = await client.call("initialize", v2())
    assert answer["protocolVersion"] == 2
    assert answer["info"]["name"] == "acp-server" and answer["info"]["version"]
    assert answer["capabilities"] == {
        "session": {
            "prompt": {"image": {}, "embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "delete": {},
            "additionalDirectories": {},
            "fork": {},
            "systemPrompt": {"mode": {"override": {}}},
        }
    }
    assert [m["type"] for m in answer["authMethods"]] == ["agent"]
    assert answer["authMethods"][0]["methodId"] == "configure-model"


async def test_a_newer_version_is_answered_2_and_a_lower_one_refused_with_the_versions() -> None:
    async with raw_agent("--model", "echo", validate=either) as client:
        assert (await client.call("initialize", v2(7)))["protocolVersion"] == 2
    async with raw_agent("--model", "echo", validate=either) as client:
        refused = await client.request("initialize", v2(0))
        assert refused["error"]["code"] == -32022
        assert refused["error"]["data"] == {"requested": 0, "supported": [1, 2]}
        # Still uninitialized: nothing else is served, and a v1 initialize then works.
        early = await client.request("session/list", {})
        assert early["error"]["code"] == -32600
        answer = await client.call("initialize", {"protocolVersion": 1})
        assert answer["protocolVersion"] == 1 and "agentCapabilities" in answer


@pytest.mark.parametrize("version", [-1, 65536, "2", None])
async def test_a_version_that_is_not_a_uint16_is_invalid_params(version: Any) -> None:
    async with raw_agent("--model", "echo", validate=either) as client:
        refused = await client.request("initialize", v2(version))
        assert refused["error"]["code"] == -32602
        assert (await client.call("initialize", v2()))["protocolVersion"] == 2


async def test_version_2_without_info_is_invalid_params() -> None:
    async with raw_agent("--model", "echo", validate=either) as client:
        refused = await client.request("initialize", {"protocolVersion": 2, "capabilities": {}})
        assert refused["error"]["code"] == -32602 and "info" in refused["error"]["data"]


async def test_a_v2_initialize_repeats_only_before_other_requests_and_never_below_2() -> None:
    async with raw_agent("--model", "echo", validate=validate_agent_frame_v2) as client:
        first = await client.call("initialize", v2())
        assert await client.call("initialize", v2()) == first
        lower = await client.request("initialize", v2(1))
        assert lower["error"]["code"] == -32600
        await client.call("session/list", {})
        late = await client.request("initialize", v2())
        assert late["error"]["code"] == -32600
        assert "repeated" in late["error"]["data"]


async def test_a_null_request_id_is_refused_on_v2(ws: Path) -> None:
    async with raw_agent("--model", "echo", validate=validate_agent_frame_v2) as client:
        await client.call("initialize", v2())
        await client.send({"jsonrpc": "2.0", "id": None, "method": "session/list", "params": {}})
        refused = await client.wait_for(lambda f: "error" in f and f.get("id") is None)
        assert refused["error"]["code"] == -32600
        assert "null" in refused["error"]["data"]
        await client.call("session/list", {})  # the connection lives on


def call(request_id: Any, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


async def test_a_batch_on_v2_is_answered_in_one_array(ws: Path) -> None:
    async with raw_agent("--model", "echo", validate=validate_agent_frame_v2) as client:
        await client.call("initialize", v2())
        answers = await client.batch(
            [
                call("a", "session/list"),
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "x"}},
                call("b", "session/new", cwd=str(ws)),
            ]
        )
        by_id = {a["id"]: a for a in answers}
        assert len(answers) == 2 and set(by_id) == {"a", "b"}
        assert "sessions" in by_id["a"]["result"] and "sessionId" in by_id["b"]["result"]
        # An all-notification batch is not answered, an empty one is one -32600: the next
        # frames are the empty batch's error, then the next request's answer.
        before = len(client.received)
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "y"}}
        await client.send_batch([cancel])
        await client.send_batch([])
        await client.call("session/list", {})
        [empty, answered] = [f for f in client.received[before:] if "method" not in f]
        assert empty["id"] is None and empty["error"]["code"] == -32600
        assert "result" in answered
        assert len(client.arrays) == 1


async def test_a_batch_on_v1_is_one_invalid_request(ws: Path) -> None:
    async with raw_agent("--model", "echo") as client:
        await client.call("initialize", {"protocolVersion": 1})
        await client.send_batch([call(1, "session/list")])
        refused = await client.wait_for(lambda f: "error" in f)
        assert refused["id"] is None and refused["error"]["code"] == -32600
        assert not client.arrays
        await client.call("session/list", {})


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("authenticate", {"methodId": "configure-model"}),
        ("logout", {}),
        ("session/load", {"sessionId": "s", "cwd": "/", "mcpServers": []}),
        ("session/set_mode", {"sessionId": "s", "modeId": "default"}),
    ],
)
async def test_v1_only_methods_are_not_found_on_v2(method: str, params: dict[str, Any]) -> None:
    async with raw_agent("--model", "echo", validate=validate_agent_frame_v2) as client:
        await client.call("initialize", v2())
        assert (await client.request(method, params))["error"]["code"] == -32601


async def test_v2_only_methods_are_not_found_on_v1() -> None:
    async with raw_agent("--model", "echo") as client:
        await client.call("initialize", {"protocolVersion": 1})
        for method in ("auth/login", "auth/logout", "tool_call/cancel", "terminal/cancel"):
            assert (await client.request(method, {}))["error"]["code"] == -32601


async def test_a_client_that_runs_terminal_auth_gets_the_setup_method() -> None:
    caps = {"auth": {"terminal": {}}}
    async with raw_agent(validate=validate_agent_frame_v2) as client:
        answer = await client.call("initialize", v2(capabilities=caps))
        [method] = answer["authMethods"]
        assert method["type"] == "terminal" and method["methodId"] == "setup"
        assert method["args"] == ["setup"]


async def test_login_is_authenticate_and_answers_the_how_to_without_a_model() -> None:
    async with raw_agent(validate=validate_agent_frame_v2) as client:
        await client.call("initialize", v2())
        unknown = await client.request("auth/login", {"methodId": "nope"})
        assert unknown["error"]["code"] == -32602
        how_to = await client.request("auth/login", {"methodId": "configure-model"})
        assert how_to["error"]["code"] == -32000
        assert "acp-server setup" in how_to["error"]["message"]
    async with raw_agent("--model", "echo", validate=validate_agent_frame_v2) as client:
        await client.call("initialize", v2())
        assert await client.call("auth/login", {"methodId": "configure-model"}) == {}


CONFIG = """\
default_model = "echo"

[providers.openai]
base_url = "http://127.0.0.1:9/v1"
api_key = "sk-stored-by-setup-000"
"""


async def logged_out(client: RawClient, ws: Path, method: str, session_id: str) -> None:
    """Log out with `method`, then check the next prompt answers the how-to."""
    answer = await client.call(method, {})
    said = answer["_meta"]["acp-server"]
    assert said["forgot"] == ["openai"] and said["configFile"].endswith("config.toml")
    refused = await client.request(
        "session/prompt", {"sessionId": session_id, "prompt": text("hi")}
    )
    assert refused["error"]["code"] == -32000
    assert "acp-server setup" in refused["error"]["message"]


@pytest.mark.parametrize("version", [1, 2])
async def test_logout_forgets_the_stored_key_and_prompts_then_answer_the_how_to(
    tmp_path: Path, ws: Path, version: int
) -> None:
    home = tmp_path / "config-home"
    config = home / "acp-server" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CONFIG)
    env = {"XDG_CONFIG_HOME": str(home)}
    check = validate_agent_frame_v2 if version == 2 else validate_agent_frame
    async with raw_agent("--model", "echo", env=env, validate=check) as client:
        if version == 2:
            sid = await new_session_v2(client, str(ws))
            await logged_out(client, ws, "auth/logout", sid)
        else:
            answer = await client.call("initialize", {"protocolVersion": 1})
            assert answer["agentCapabilities"]["auth"] == {"logout": {}}
            result = await client.call("session/new", {"cwd": str(ws), "mcpServers": []})
            await logged_out(client, ws, "logout", result["sessionId"])
    after = config.read_text()
    assert "sk-stored-by-setup-000" not in after
    assert after == CONFIG.replace('api_key = "sk-stored-by-setup-000"\n', "")
