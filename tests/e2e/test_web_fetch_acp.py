"""`web_fetch` through the real `acp-server` and the official SDK client, against a web server
on 127.0.0.1 (tests/support/web_server.py): the permission question in each mode, "allow
always" covering one host, sandboxed mode refusing it unless `[sandbox] network` is on,
private addresses refused unless the config allows them, no cookie or provider key sent, and a
cancel mid-download answering the prompt `cancelled` while the server is still sending."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from tests.support.command_sandbox import needs_bwrap
from tests.support.scripted_model import script
from tests.support.tool_client import DONE, SANDBOXED, ToolClient, agent_session, call
from tests.support.web_server import Page, serve_pages

pytestmark = pytest.mark.anyio

KEY = "sk-web-fetch-test-key-0123456789"


def config(
    tmp_path: Path, text: str = "[web_fetch]\nallow_private_addresses = true\n"
) -> dict[str, str]:
    """An environment whose config file is `text`, with provider keys set."""
    home = tmp_path / "config"
    (home / "acp-server").mkdir(parents=True, exist_ok=True)
    (home / "acp-server" / "config.toml").write_text(text)
    return {"XDG_CONFIG_HOME": str(home), "OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}


async def test_allow_always_covers_one_host(tmp_path: Path, ws: Path) -> None:
    pages = {"/a": Page(b"<h1>A</h1>"), "/b": Page(b"<h1>B</h1>")}
    with serve_pages(pages) as server:
        port = server.port
        spec = script(
            tmp_path,
            call("web_fetch", url=f"http://127.0.0.1:{port}/a"),
            call("web_fetch", url=f"http://127.0.0.1:{port}/b"),
            call("web_fetch", url=f"http://localhost:{port}/a"),
            DONE,
        )
        client = ToolClient(["allow_always", "reject_once"])
        async with agent_session(ws, spec, client=client, env=config(tmp_path)) as s:
            assert await s.prompt() == "end_turn"
        requests = list(server.requests)
    # The second page of the same host ran without a question; another host was asked.
    assert s.client.asked_titles == [
        f"Fetch http://127.0.0.1:{port}/a",
        f"Fetch http://localhost:{port}/a",
    ]
    finished = s.client.finished()
    assert [status for _, status, _ in finished] == ["completed", "completed", "failed"]
    assert "# A" in finished[0][2] and "# B" in finished[1][2]
    assert [r.path for r in requests] == ["/a", "/b"]
    assert {u.kind for u in s.client.kinds("tool_call")} == {"fetch"}
    for request in requests:
        assert "cookie" not in request.headers and "authorization" not in request.headers
        assert KEY not in json.dumps(request.headers)


@pytest.mark.parametrize(
    ("mode", "asked"),
    [("default", True), ("accept_edits", True), ("read_only", True), ("bypass", False)],
)
async def test_which_modes_ask(tmp_path: Path, ws: Path, mode: str, asked: bool) -> None:
    with serve_pages({"/a": Page(b"<p>hello</p>")}) as server:
        spec = script(tmp_path, call("web_fetch", url=f"{server.url}/a"), DONE)
        env = {**config(tmp_path), **SANDBOXED}  # bypass as root needs it
        client = ToolClient(["allow_once"])
        async with agent_session(ws, spec, "--mode", mode, client=client, env=env) as s:
            assert await s.prompt() == "end_turn"
        assert len(server.requests) == 1
    assert len(s.client.permission_requests) == int(asked)
    [(_, status, text)] = s.client.finished()
    assert status == "completed" and "hello" in text


@pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux only")
@needs_bwrap
@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_sandboxed_mode_fetches_only_with_the_network_on(
    tmp_path: Path, ws: Path, network: bool
) -> None:
    text = (
        f"[sandbox]\nnetwork = {'true' if network else 'false'}\n"
        "[web_fetch]\nallow_private_addresses = true\n"
    )
    with serve_pages({"/a": Page(b"<p>hello</p>")}) as server:
        spec = script(tmp_path, call("web_fetch", url=f"{server.url}/a"), DONE)
        async with agent_session(ws, spec, "--mode", "sandboxed", env=config(tmp_path, text)) as s:
            assert await s.prompt() == "end_turn"
        requests = len(server.requests)
    assert s.client.permission_requests == []  # never asked either way
    [(_, status, result)] = s.client.finished()
    if network:
        assert status == "completed" and "hello" in result and requests == 1
    else:
        assert status == "failed" and requests == 0
        assert "[sandbox]" in result and "network = true" in result


async def test_private_addresses_are_refused_without_the_config(tmp_path: Path, ws: Path) -> None:
    with serve_pages({"/a": Page(b"<p>internal</p>")}) as server:
        spec = script(tmp_path, call("web_fetch", url=f"{server.url}/a"), DONE)
        client = ToolClient(["allow_once"])
        async with agent_session(ws, spec, client=client, env=config(tmp_path, "")) as s:
            assert await s.prompt() == "end_turn"
        assert server.requests == []
    [(_, status, text)] = s.client.finished()
    assert status == "failed" and "loopback" in text and "allow_private_addresses" in text


async def test_a_cancel_mid_download_answers_cancelled_at_once(tmp_path: Path, ws: Path) -> None:
    slow = Page(b"<p>" + b"x" * 1000, stream=True)
    with serve_pages({"/slow": slow}) as server:
        spec = script(tmp_path, call("web_fetch", url=f"{server.url}/slow"), DONE)
        client = ToolClient(["allow_once"])
        async with agent_session(ws, spec, client=client, env=config(tmp_path)) as s:
            stops: list[str] = []

            async def prompt() -> None:
                stops.append(await s.prompt())

            async with anyio.create_task_group() as tg:
                tg.start_soon(prompt)
                await anyio.to_thread.run_sync(server.sent_part.wait)
                await s.conn.cancel(session_id=s.sid)
            # The prompt answered while the server was still sending (it is never released
            # before the block ends): the cancel ended the download, not the page's end.
            assert not server.release.is_set()
            await anyio.to_thread.run_sync(server.finished_sending.wait)
    assert stops == ["cancelled"]


@pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux only")
@needs_bwrap
async def test_a_subagent_fetches_in_sandboxed_mode_with_the_network_on(
    tmp_path: Path, ws: Path
) -> None:
    text = "[sandbox]\nnetwork = true\n[web_fetch]\nallow_private_addresses = true\n"
    with serve_pages({"/a": Page(b"<p>for the child</p>")}) as server:
        path = tmp_path / "model.json"
        path.write_text(
            json.dumps(
                {
                    "responses": [call("task", prompt="read it", description="read"), DONE],
                    "subagent": {
                        "responses": [call("web_fetch", url=f"{server.url}/a"), [{"text": "ok"}]]
                    },
                }
            )
        )
        async with agent_session(
            ws, f"script:{path}", "--mode", "sandboxed", env=config(tmp_path, text)
        ) as s:
            assert await s.prompt() == "end_turn"
        assert [r.path for r in server.requests] == ["/a"]
    assert s.client.permission_requests == []
