"""The `web_fetch` tool against a real HTTP server on 127.0.0.1 (tests/support/web_server.py):
HTML becomes Markdown, text and JSON pass through, binary content is refused naming its type,
the size, redirect and time caps hold and say what they cut, a cancel stops a download at
once, and no cookie, credential or provider key is sent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.tools.base import ToolOutput
from acp_server.tools.builtin.web import USER_AGENT, WebFetch
from acp_server.tools.web_access import WebFetchSettings
from acp_server.tools.workspace import PathRoots
from tests.support.tool_call import a_call
from tests.support.turns import fresh_signal
from tests.support.web_server import Page, WebServer, serve_pages

pytestmark = pytest.mark.anyio

HTML = (
    b"<!doctype html><html><head><title>Docs</title><style>p{color:red}</style>"
    b"<script>alert('x')</script></head><body><h1>Install</h1><p>Run <code>uv add x</code>"
    b" and read <a href='/more'>the guide</a>.</p><ul><li>fast</li><li>small</li></ul>"
    b"</body></html>"
)


def tool(tmp_path: Path, **settings: object) -> WebFetch:
    values: dict[str, object] = {"allow_private_addresses": True, **settings}
    return WebFetch(PathRoots(str(tmp_path)), WebFetchSettings(**values))  # type: ignore[arg-type]


async def fetch(web: WebFetch, url: str, **more: object) -> ToolOutput:
    return await web.run({"url": url, **more}, a_call(), fresh_signal())


async def test_html_becomes_markdown(tmp_path: Path) -> None:
    with serve_pages({"/docs": Page(HTML)}) as server:
        output = await fetch(tool(tmp_path), f"{server.url}/docs")
    assert not output.failed, output.text
    assert output.text.startswith(f"URL: {server.url}/docs\nStatus: 200 OK\n")
    assert "Content-Type: text/html, converted to Markdown" in output.text
    assert "# Install" in output.text
    assert "Run `uv add x` and read [the guide](/more)." in output.text
    assert "- fast\n- small" in output.text
    assert "alert" not in output.text and "color:red" not in output.text
    assert "<p>" not in output.text


async def test_json_and_text_pass_through(tmp_path: Path) -> None:
    data = json.dumps({"name": "x", "tags": ["<b>", "é"]}, ensure_ascii=False).encode()
    pages = {
        "/api": Page(data, "application/json"),
        "/notes.txt": Page(b"line <one>\nline two\n", "text/plain; charset=utf-8"),
        "/bare": Page(b"no type here\n", None),
    }
    with serve_pages(pages) as server:
        api = await fetch(tool(tmp_path), f"{server.url}/api")
        notes = await fetch(tool(tmp_path), f"{server.url}/notes.txt")
        bare = await fetch(tool(tmp_path), f"{server.url}/bare")
    assert not api.failed and api.text.endswith(data.decode())
    assert "Content-Type: application/json\n" in api.text
    assert not notes.failed and notes.text.endswith("line <one>\nline two\n")
    assert not bare.failed and bare.text.endswith("no type here\n")


async def test_binary_is_refused_naming_its_type(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 5000
    pages = {"/logo.png": Page(png, "image/png"), "/blob": Page(png, None)}
    with serve_pages(pages) as server:
        typed = await fetch(tool(tmp_path), f"{server.url}/logo.png")
        untyped = await fetch(tool(tmp_path), f"{server.url}/blob")
    assert typed.failed and "image/png" in typed.text and "Refused" in typed.text
    assert untyped.failed and "looks binary" in untyped.text


async def test_the_size_cap_stops_the_download_and_says_so(tmp_path: Path) -> None:
    chunk = b"0123456789abcdef" * 64  # 1 KiB
    with serve_pages({"/big": Page(chunk, "text/plain", repeat=10_000)}) as server:
        output = await fetch(tool(tmp_path, max_bytes=4096), f"{server.url}/big")
    assert not output.failed
    assert "only its first 4096 bytes of 10240000 bytes were read" in output.text
    body = output.text.split("\n\n", 1)[1]
    assert len(body) == 4096


async def test_a_long_result_is_cut_to_the_budget_with_an_offset_to_read_on(
    tmp_path: Path,
) -> None:
    text = "".join(f"line {n}\n" for n in range(5000)).encode()
    web = WebFetch(
        PathRoots(str(tmp_path)), WebFetchSettings(allow_private_addresses=True), max_bytes=4096
    )
    with serve_pages({"/long.txt": Page(text, "text/plain")}) as server:
        first = await fetch(web, f"{server.url}/long.txt")
        assert len(first.text.encode()) <= 4096
        offset = int(first.text.rsplit("offset=", 1)[1].split(" ", 1)[0])
        more = await fetch(web, f"{server.url}/long.txt", offset=offset)
    assert "more characters of" in first.text
    assert f"[from character {offset} of " in more.text
    assert more.text.split("]\n\n", 1)[1].startswith(text.decode()[offset : offset + 50])


async def test_redirects_follow_the_same_host_up_to_the_cap(tmp_path: Path) -> None:
    pages = {
        "/a": Page(redirect="/b"),
        "/b": Page(redirect="/c"),
        "/c": Page(b"<p>arrived</p>"),
        **{f"/loop{n}": Page(redirect=f"/loop{n + 1}") for n in range(10)},
    }
    with serve_pages(pages) as server:
        followed = await fetch(tool(tmp_path, max_redirects=2), f"{server.url}/a")
        looped = await fetch(tool(tmp_path, max_redirects=2), f"{server.url}/loop0")
        asked = [r.path for r in server.requests]
    assert not followed.failed and "arrived" in followed.text
    assert f"(redirected from {server.url}/a)" in followed.text
    assert looped.failed and "Too many redirects" in looped.text and "limit of 2" in looped.text
    assert asked.count("/loop3") == 0  # the third redirect is never followed


async def test_a_redirect_to_another_host_is_reported_not_followed(tmp_path: Path) -> None:
    with serve_pages({}) as other:
        with serve_pages({"/go": Page(redirect=f"http://localhost:{other.port}/x")}) as server:
            output = await fetch(tool(tmp_path), f"{server.url}/go")
        assert other.requests == []
    assert not output.failed
    assert f"redirects (HTTP 302) to another host: http://localhost:{other.port}/x" in output.text


async def test_a_redirect_to_a_refused_scheme_is_refused(tmp_path: Path) -> None:
    with serve_pages({"/go": Page(redirect="file:///etc/passwd")}) as server:
        output = await fetch(tool(tmp_path), f"{server.url}/go")
    assert output.failed and "only http and https" in output.text


@pytest.mark.parametrize("location", ["http://[::1", "http://a.example\\@b.example/", ""])
async def test_a_malformed_redirect_is_refused(tmp_path: Path, location: str) -> None:
    with serve_pages({"/go": Page(redirect=location), "/": Page(redirect=location)}) as server:
        output = await fetch(tool(tmp_path, max_redirects=1), f"{server.url}/go")
    assert output.failed, output.text
    said = ("redirects to", "Too many redirects", "Invalid URL in location header")
    assert any(words in output.text for words in said), output.text


async def test_the_time_cap_ends_a_hung_download(tmp_path: Path) -> None:
    with serve_pages({"/slow": Page(b"<p>start", stream=True)}) as server:
        output = await fetch(tool(tmp_path, timeout=0.5), f"{server.url}/slow")
        assert not server.release.is_set()  # the server never finished: the cap ended it
    assert output.failed and "timed out after 0.5 s" in output.text


async def test_a_cancel_stops_a_download_at_once(tmp_path: Path) -> None:
    cancellation = TurnCancellation()
    web = tool(tmp_path, timeout=3600)
    outcome: list[BaseException] = []

    async def run(server: WebServer) -> None:
        try:
            await web.run({"url": f"{server.url}/slow"}, a_call(), cancellation.signal)
        except TurnAborted as exc:
            outcome.append(exc)

    with serve_pages({"/slow": Page(b"x" * 1000, "text/plain", stream=True)}) as server:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, server)
            await anyio.to_thread.run_sync(server.sent_part.wait)
            cancellation.abort(UserCancel())
        # The tool returned while the server still had more to send: the cancel, not the
        # end of the answer nor the (hour-long) time cap, ended it; and the connection closed.
        assert not server.release.is_set()
        await anyio.to_thread.run_sync(server.finished_sending.wait)
    assert len(outcome) == 1


async def test_no_cookies_no_credentials_no_keys_are_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-provider-key-123456"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login me password {secret}\n")
    os.chmod(netrc, 0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    pages = {
        "/start": Page(redirect="/end", headers={"set-cookie": "session=abc; Path=/"}),
        "/end": Page(b"<p>done</p>"),
    }
    with serve_pages(pages) as server:
        output = await fetch(tool(tmp_path), f"{server.url}/start")
        again = await fetch(tool(tmp_path), f"{server.url}/end")
        with_user = await fetch(tool(tmp_path), f"http://me:{secret}@127.0.0.1:{server.port}/end")
    assert not output.failed and not again.failed
    assert with_user.failed and "user name or password" in with_user.text
    assert [r.path for r in server.requests] == ["/start", "/end", "/end"]
    for request in server.requests:
        assert "cookie" not in request.headers
        assert "authorization" not in request.headers
        assert request.headers["user-agent"] == USER_AGENT
        assert secret not in json.dumps(request.headers)
        assert set(request.headers) <= {
            "host",
            "accept",
            "accept-encoding",
            "user-agent",
            "connection",
        }


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/x",
        "http://localhost:{port}/x",
        "http://[::1]:{port}/x",
        "http://2130706433:{port}/x",
    ],
)
async def test_private_addresses_are_refused_by_default(tmp_path: Path, url: str) -> None:
    web = WebFetch(PathRoots(str(tmp_path)))
    with serve_pages({"/x": Page(b"<p>internal</p>")}) as server:
        output = await fetch(web, url.format(port=server.port))
        assert server.requests == []
    assert output.failed
    assert "allow_private_addresses" in output.text


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://example.com/x", "only http and https"),
        ("https://a.example\\@b.example/", "backslashes"),
        ("https://user@example.com/", "user name or password"),
        ("https:///path", "no host"),
        ("not a url", "spaces"),
    ],
)
async def test_urls_that_could_be_misread_are_refused(tmp_path: Path, url: str, why: str) -> None:
    output = await fetch(WebFetch(PathRoots(str(tmp_path))), url)
    assert output.failed and why in output.text


async def test_an_error_status_fails_with_the_page(tmp_path: Path) -> None:
    with serve_pages({}) as server:
        output = await fetch(tool(tmp_path), f"{server.url}/missing")
    assert output.failed
    assert "Status: 404 Not Found" in output.text and "not here" in output.text


async def test_hostile_nesting_still_gives_the_text(tmp_path: Path) -> None:
    deep = b"<div>" * 20_000 + b"deep text" + b"</div>" * 20_000
    with serve_pages({"/deep": Page(deep)}) as server:
        output = await fetch(tool(tmp_path), f"{server.url}/deep")
    assert not output.failed and "deep text" in output.text
    assert "nests too deeply to convert to Markdown" in output.text


async def test_the_charset_is_read_from_the_header_or_the_page(tmp_path: Path) -> None:
    latin = "<html><head><meta charset='iso-8859-1'></head><body><p>café</p></body></html>"
    pages = {
        "/meta": Page(latin.encode("latin-1"), "text/html"),
        "/header": Page("<p>naïve</p>".encode("cp1252"), "text/html; charset=windows-1252"),
    }
    with serve_pages(pages) as server:
        meta = await fetch(tool(tmp_path), f"{server.url}/meta")
        header = await fetch(tool(tmp_path), f"{server.url}/header")
    assert meta.text.endswith("café") and header.text.endswith("naïve")


async def test_the_address_connected_to_is_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that resolved to a public address for the check and to a private one for the
    connection (DNS rebinding): the answer is refused before it is read."""

    async def public(host: str, port: int, **_: object) -> list[tuple[object, ...]]:
        return [(0, 0, 0, "", ("93.184.216.34", port))]

    monkeypatch.setattr("acp_server.tools.builtin.web.anyio.getaddrinfo", public)
    web = WebFetch(PathRoots(str(tmp_path)))
    with serve_pages({"/x": Page(b"<p>internal secret</p>")}) as server:
        output = await fetch(web, f"{server.url}/x")
    assert output.failed and "loopback" in output.text
    assert "internal secret" not in output.text
