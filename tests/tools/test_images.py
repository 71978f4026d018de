"""`read_file` of image files: PNG, JPEG, GIF and WebP told apart by their first bytes (not the
name), returned as base64 with a one-line description; over the cap only described; hostile
files (a PNG header followed by junk, a truncated JPEG, too many pixels, a link out of the
workspace, a FIFO named x.png) refused with a clear message and without blocking."""

from __future__ import annotations

import base64
import io
import os

import pytest
from PIL import Image

from acp_server.cancellation import TurnCancellation
from acp_server.tools.builtin.files import ReadFile
from acp_server.tools.images import MAX_PIXELS, MAX_SIDE, image_type
from acp_server.tools.local_files import LocalFiles
from tests.support.tool_call import a_call
from tests.support.tool_workspace import Workspace

pytestmark = pytest.mark.anyio


def image_bytes(fmt: str, size: tuple[int, int] = (3, 2)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(buffer, format=fmt)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("fmt", "mime", "name"),
    [
        ("PNG", "image/png", "PNG"),
        ("JPEG", "image/jpeg", "JPEG"),
        ("GIF", "image/gif", "GIF"),
        ("WEBP", "image/webp", "WebP"),
    ],
)
async def test_an_image_comes_back_as_itself_with_a_description(
    ws: Workspace, fmt: str, mime: str, name: str
) -> None:
    data = image_bytes(fmt)
    path = ws.root / "picture.bin"  # the name says nothing: the bytes do
    path.write_bytes(data)
    out = await ws.run("read_file", path="picture.bin")
    assert not out.failed
    assert out.text == f"[image {path}: {name}, 3x2 pixels, {len(data)} bytes]"
    [image] = out.images
    assert image.mime_type == mime
    assert base64.b64decode(image.data) == data


async def test_a_text_file_named_png_is_read_as_text(ws: Workspace) -> None:
    ws.file("notes.png", "just text\n")
    out = await ws.run("read_file", path="notes.png")
    assert out.text == "just text\n" and not out.images


async def test_a_png_header_followed_by_junk_fails_and_names_the_problem(ws: Workspace) -> None:
    (ws.root / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(4000))
    out = await ws.run("read_file", path="x.png")
    assert out.failed and not out.images
    assert "starts like a PNG image but is not a valid one" in out.text


async def test_a_truncated_jpeg_fails(ws: Workspace) -> None:
    data = image_bytes("JPEG", (64, 64))
    (ws.root / "cut.jpg").write_bytes(data[: len(data) // 2])
    out = await ws.run("read_file", path="cut.jpg")
    assert out.failed and "JPEG" in out.text and not out.images


async def test_an_image_with_too_many_pixels_a_side_fails(ws: Workspace) -> None:
    data = image_bytes("PNG", (MAX_SIDE + 1, 1))
    (ws.root / "wide.png").write_bytes(data)
    out = await ws.run("read_file", path="wide.png")
    assert out.failed and f"more than {MAX_SIDE} a side" in out.text


async def test_a_small_file_of_too_many_pixels_is_refused_before_decoding(ws: Workspace) -> None:
    side = int(MAX_PIXELS**0.5) + 1  # flat colour: a small PNG, 100 MB decoded
    data = image_bytes("PNG", (side, side))
    assert len(data) < 200_000
    (ws.root / "flat.png").write_bytes(data)
    out = await ws.run("read_file", path="flat.png")
    assert out.failed and f"more than {MAX_PIXELS:,} in all" in out.text


async def test_an_image_over_the_cap_is_described_not_sent(ws: Workspace) -> None:
    data = image_bytes("PNG", (40, 30))
    path = ws.root / "big.png"
    path.write_bytes(data)
    tool = ReadFile(ws.path_roots, LocalFiles(), max_image_bytes=len(data) - 1)
    out = await tool.run({"path": "big.png"}, a_call(), TurnCancellation().signal)
    assert not out.failed and not out.images
    assert out.text.startswith(f"[image {path}: PNG, 40x30 pixels, {len(data)} bytes]\n")
    assert f"over the {len(data) - 1}-byte limit" in out.text


async def test_a_link_out_of_the_workspace_is_refused(ws: Workspace) -> None:
    (ws.outside / "secret.png").write_bytes(image_bytes("PNG"))
    (ws.root / "link.png").symlink_to(ws.outside / "secret.png")
    out = await ws.run("read_file", path="link.png")
    assert out.failed and not out.images
    assert "outside" in out.text


async def test_a_fifo_named_png_is_refused_without_blocking(ws: Workspace) -> None:
    os.mkfifo(ws.root / "x.png")
    out = await ws.run("read_file", path="x.png")  # no writer: an open would block for ever
    assert out.failed and "FIFO" in out.text


async def test_signatures() -> None:
    assert image_type(b"\x89PNG\r\n\x1a\n....") == "image/png"
    assert image_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert image_type(b"GIF89a") == "image/gif" and image_type(b"GIF87a") == "image/gif"
    assert image_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert image_type(b"RIFF\x00\x00\x00\x00WAVEfmt ") is None
    assert image_type(b"\x89PNG") is None  # a prefix of the signature is not enough
    assert image_type(b"") is None
