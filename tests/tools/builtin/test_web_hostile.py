"""`web_fetch` against hostile answers and addresses (issue 35), with a real HTTP server on
127.0.0.1 (tests/support/web_server.py): a compression bomb, and pages whose conversion to
Markdown grew without bound (nested, unclosed, `colspan` tables), leave the fetching
process's memory within a small multiple of the cap (measured in a child process), codings
not asked for are refused, IPv6 forms that carry a private IPv4 address are refused before
connecting, and a charset that cannot be used is said in one sentence."""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.tools.base import ToolOutput
from acp_server.tools.builtin.web import WebFetch
from acp_server.tools.web_access import WebFetchSettings, non_public
from acp_server.tools.workspace import PathRoots
from tests.support.tool_call import a_call
from tests.support.turns import fresh_signal
from tests.support.web_server import Page, serve_pages

pytestmark = pytest.mark.anyio


def tool(tmp_path: Path, **settings: object) -> WebFetch:
    values: dict[str, object] = {"allow_private_addresses": True, **settings}
    return WebFetch(PathRoots(str(tmp_path)), WebFetchSettings(**values))  # type: ignore[arg-type]


async def fetch(web: WebFetch, url: str) -> ToolOutput:
    return await web.run({"url": url}, a_call(), fresh_signal())


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("2002:7f00:1::", "127.0.0.1, a loopback"),  # 6to4
        ("2002:a9fe:a9fe::1", "169.254.169.254"),  # 6to4 of the cloud metadata address
        ("64:ff9b::7f00:1", "127.0.0.1, a loopback"),  # NAT64, the well-known prefix
        ("64:ff9b::a00:1", "10.0.0.1, a private"),
        ("64:ff9b:1:7f00:0:100::", "127.0.0.1 is a loopback"),  # local-use NAT64, read as /48
        ("64:ff9b:1::c0a8:1", "or 192.168.0.1 (/96)"),  # local-use NAT64, read as /96
        ("fec0::1", "fec0::1, a site-local address"),  # deprecated, Python calls it global
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


async def test_a_page_in_punycode_is_read_as_utf8_not_decoded_in_quadratic_time(
    tmp_path: Path,
) -> None:
    """Python's punycode decoder takes time quadratic in its input (14.6 s of the event loop for
    400 KB, which no cancel or deadline could stop); browsers do not read text in it, and
    neither does web_fetch, whether the header or a `<meta>` names it."""
    words = b"-" + b"abcdefghijklmnopqrstuvwxyz" * 16_000
    pages = {
        "/puny.txt": Page(words, "text/plain; charset=punycode"),
        "/puny": Page(b'<html><head><meta charset="punycode"></head><body>' + words, "text/html"),
    }
    with serve_pages(pages) as server:
        for path in pages:
            output = await fetch(tool(tmp_path), f"{server.url}{path}")
            assert not output.failed, output.text
            assert "[the page names the charset 'punycode', which web_fetch cannot" in output.text
            assert "-abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz" in output.text


MiB = 1 << 20
REPO = Path(__file__).resolve().parents[3]


def bomb(mib: int, wbits: int = 31) -> bytes:
    """A gzip (or zlib, raw deflate) stream of `mib` MiB of `x`, built in a moment: segments
    of 16 MiB, each ended by a full flush (which resets the compressor), are byte for byte the
    same, so the stream repeats one. It has no end: a bomb need not be a valid whole."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    text = b"x" * (16 * MiB)
    head = compressor.compress(text) + compressor.flush(zlib.Z_FULL_FLUSH)
    segment = compressor.compress(text) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head + segment * (mib // 16 - 1)


def gzip_of(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


async def peak_growth(warm_url: str, url: str, max_bytes: int) -> dict[str, Any]:
    """Fetch `url` in a child process (tests/support/fetch_memory.py): its memory growth."""
    command = [sys.executable, "-m", "tests.support.fetch_memory", warm_url, url, str(max_bytes)]
    with anyio.fail_after(120):
        done = await anyio.run_process(command, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


BOMBS = {
    # 3.4 KiB on the wire, 2 GiB once undone twice (the 658 bytes gave 300 MiB).
    "gzip twice": ("gzip, gzip", lambda: gzip_of(bomb(2048))),
    "gzip": ("gzip", lambda: bomb(2048)),  # 2 MiB on the wire, 2 GiB undone
    "deflate": ("deflate", lambda: bomb(1024, 15)),
    "raw deflate": ("deflate", lambda: bomb(1024, -15)),
}


@pytest.mark.parametrize("name", list(BOMBS))
async def test_a_compression_bomb_is_undone_only_up_to_the_cap(name: str) -> None:
    coding, build = BOMBS[name]
    body = build()
    pages = {
        "/warm": Page(b"warm", "text/plain"),
        "/bomb": Page(body, "text/plain", headers={"content-encoding": coding}),
    }
    cap = 2 * MiB
    with serve_pages(pages) as server:
        result = await peak_growth(f"{server.url}/warm", f"{server.url}/bomb", cap)
        asked = server.requests[-1].headers["accept-encoding"]
    text = result["text"]
    # What is kept (the cap) and the text made of it, not the gigabytes the answer unpacks to.
    assert result["growth"] is not None and result["growth"] <= 8 * cap, text[:300]
    assert not result["failed"], text
    assert f"decoded from {coding}, is larger than the {cap} bytes download limit" in text
    assert f"more characters of {cap} not shown" in text  # exactly the cap was kept
    assert asked == "gzip, deflate"


async def test_an_answer_encoded_three_times_or_in_a_coding_not_asked_for_is_refused() -> None:
    triple = gzip_of(gzip_of(bomb(2048)))  # 268 bytes that unpack to 2 GiB
    assert len(triple) < 1024
    pages = {
        "/warm": Page(b"warm", "text/plain"),
        "/triple": Page(triple, "text/plain", headers={"content-encoding": "gzip, gzip, gzip"}),
        "/br": Page(b"\x1b\x00", "text/plain", headers={"content-encoding": "br"}),
    }
    with serve_pages(pages) as server:
        triple_result = await peak_growth(f"{server.url}/warm", f"{server.url}/triple", 2 * MiB)
        brotli = await fetch(tool(Path(".")), f"{server.url}/br")
    assert triple_result["failed"]
    assert "encoded 3 times over; web_fetch undoes at most 2 codings" in triple_result["text"]
    assert triple_result["growth"] <= 8 * 2 * MiB
    assert brotli.failed
    assert "encoded as 'br', which web_fetch did not ask for" in brotli.text


async def test_a_corrupt_encoding_is_said(tmp_path: Path) -> None:
    broken = gzip_of(b"hello")[:10] + b"\xff" * 64  # a gzip header, then no valid block
    pages = {"/x": Page(broken, "text/plain", headers={"content-encoding": "gzip"})}
    with serve_pages(pages) as server:
        output = await fetch(tool(tmp_path), f"{server.url}/x")
    assert output.failed and "the answer's gzip encoding is corrupt" in output.text


async def test_every_gzip_member_is_read_and_data_after_the_end_is_said(tmp_path: Path) -> None:
    gzip = {"content-encoding": "gzip"}
    pages = {
        "/members": Page(gzip_of(b"first ") + gzip_of(b"second"), "text/plain", headers=gzip),
        "/trailing": Page(gzip_of(b"body") + b"GARBAGE" * 100, "text/plain", headers=gzip),
    }
    with serve_pages(pages) as server:
        members = await fetch(tool(tmp_path), f"{server.url}/members")
        trailing = await fetch(tool(tmp_path), f"{server.url}/trailing")
    assert not members.failed and members.text.endswith("\n\nfirst second"), members.text
    assert not trailing.failed and trailing.text.endswith("\n\nbody"), trailing.text
    assert (
        "[the bytes after the end of the answer's gzip data are not gzip and were left out]"
        in trailing.text
    )


def nested_blockquotes(size: int) -> bytes:
    depth = size // 2 // len(b"<blockquote>t ")
    return b"<blockquote>t " * depth + b"x" + b"</blockquote>" * depth


def colspan_table(size: int) -> bytes:
    row = b"<tr>" + b"<td colspan=1000>x</td>" * 20 + b"</tr>\n"
    return b"<table>" + row * (size // len(row)) + b"</table>"


def unclosed_blockquotes(size: int) -> bytes:
    line = b"<blockquote>line of text\n"
    return line * (size // len(line))


TEXT = {
    "nested blockquotes": "t\nt\n",
    "colspan table": "x",
    "unclosed blockquotes": "line of text",
}
PAGES = {
    "nested blockquotes": nested_blockquotes,
    "colspan table": colspan_table,
    "unclosed blockquotes": unclosed_blockquotes,
}


@pytest.mark.parametrize("name", list(PAGES))
async def test_a_hostile_page_leaves_the_memory_within_a_small_multiple_of_the_cap(
    name: str,
) -> None:
    """Each of these made the converter use 0.4-1.5 GB when it ran in the agent (issue 35)."""
    cap = 2 * MiB
    page = PAGES[name](cap)
    pages = {"/warm": Page(b"<h1>warm</h1><p>up</p>"), "/page": Page(page)}
    with serve_pages(pages) as server:
        result = await peak_growth(f"{server.url}/warm", f"{server.url}/page", cap)
    text = result["text"]
    assert result["growth"] is not None and result["growth"] <= 8 * cap, text[:300]
    assert not result["failed"], text
    body = text.split("\n\n", 1)[1]
    assert TEXT[name] in body  # the text of the page came back
