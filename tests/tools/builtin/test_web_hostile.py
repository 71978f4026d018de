"""`web_fetch` against hostile answers and addresses (issue 35), with a real HTTP server on
127.0.0.1 (tests/support/web_server.py): IPv6 forms that carry a private IPv4 address are
refused before connecting, and a charset that cannot be used is said in one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server.tools.base import ToolOutput
from acp_server.tools.builtin.web import WebFetch
from acp_server.tools.web_access import WebFetchSettings, non_public
from acp_server.tools.workspace import PathRoots
from tests.support.turns import fresh_signal
from tests.support.web_server import Page, serve_pages

pytestmark = pytest.mark.anyio


def tool(tmp_path: Path, **settings: object) -> WebFetch:
    values: dict[str, object] = {"allow_private_addresses": True, **settings}
    return WebFetch(PathRoots(str(tmp_path)), WebFetchSettings(**values))  # type: ignore[arg-type]


async def fetch(web: WebFetch, url: str) -> ToolOutput:
    return await web.run({"url": url}, fresh_signal())


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("2002:7f00:1::", "127.0.0.1, a loopback"),  # 6to4
        ("2002:a9fe:a9fe::1", "169.254.169.254"),  # 6to4 of the cloud metadata address
        ("64:ff9b::7f00:1", "127.0.0.1, a loopback"),  # NAT64, the well-known prefix
        ("64:ff9b::a00:1", "10.0.0.1, a private"),
        ("64:ff9b:1:7f00:0:100::", "127.0.0.1, a loopback"),  # local-use NAT64, read as /48
        ("64:ff9b:1::c0a8:1", "a NAT64 address of"),  # local-use NAT64, read as /96
    ],
)
async def test_an_ipv6_form_of_a_private_ipv4_address_is_refused_before_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: str, carried: str
) -> None:
    async def resolve(host: str, port: int, **_: object) -> list[tuple[object, ...]]:
        return [(0, 0, 0, "", (address, port, 0, 0))]

    monkeypatch.setattr("acp_server.tools.builtin.web.anyio.getaddrinfo", resolve)
    web = WebFetch(PathRoots(str(tmp_path)))
    with serve_pages({"/x": Page(b"<p>internal</p>")}) as server:
        output = await fetch(web, f"{server.url}/x")
        assert server.requests == []  # refused before connecting, not by the peer check
    assert output.failed and carried in output.text, output.text
    assert "allow_private_addresses" in output.text


@pytest.mark.parametrize(
    "address",
    ["2002:5db8:d822::1", "64:ff9b::5db8:d822", "93.184.216.34", "2606:4700:4700::1111"],
)
def test_an_ipv6_form_of_a_public_ipv4_address_counts_as_public(address: str) -> None:
    assert non_public(address) is None


@pytest.mark.parametrize("charset", ["rot13", "base64", "idna", "no-such-charset"])
async def test_a_charset_that_cannot_be_used_is_one_sentence_and_the_text_still_comes(
    tmp_path: Path, charset: str
) -> None:
    pages = {
        "/notes.txt": Page("caf\u00e9 notes\n".encode(), f"text/plain; charset={charset}"),
        "/page": Page(f"<meta charset='{charset}'><p>caf\u00e9 page</p>".encode(), "text/html"),
    }
    with serve_pages(pages) as server:
        for path, text in (("/notes.txt", "caf\u00e9 notes"), ("/page", "caf\u00e9 page")):
            output = await fetch(tool(tmp_path), f"{server.url}{path}")
            assert not output.failed and output.text.rstrip().endswith(text), output.text
            sentence = (
                f"[the page names the charset {charset!r}, which web_fetch cannot read "
                "text in, so it was read as UTF-8]"
            )
            assert sentence in output.text
            assert "Error" not in output.text and "codecs" not in output.text
