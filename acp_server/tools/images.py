"""Image files for `read_file`: told apart by their first bytes, checked, and capped.

A file is an image when its first bytes are a PNG, JPEG, GIF or WebP signature (the name does
not matter: `x.png` holding text is read as text). Such a file is read from the local disk
through the same link-refusing open as every other read (`local_files.open_checked`), never
through the client's `fs/read_text_file`, which carries text only.

What comes back (`image_output`):

- a file within `max_bytes` that Pillow decodes completely, at most `MAX_SIDE` pixels a side
  and `MAX_PIXELS` in all, becomes an `ImageData` (base64) beside a one-line description
  (type, pixels, bytes); the model is sent the image when it takes images
  (acp_server/models/images.py), else the line;
- a larger file gets the description and the limit, without the image (not a failure);
- a file that starts like an image but does not decode (a PNG header followed by junk, a
  truncated JPEG) fails with the decoder's reason: a provider would refuse the request that
  carried it, and every later request of the session with it.

Decoding runs in a worker thread after the size check, so it is bounded by the cap; the turn
signal is checked between the file's chunks and after decoding.
See docs/rfc/implemented/feature/2026-12-02-images-from-read-file.md.
"""

from __future__ import annotations

import base64
import io
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from acp_server.cancellation import TurnSignal
from acp_server.tools.base import ImageData, Location, ToolOutput
from acp_server.tools.local_files import Stopped, in_thread, open_checked, read_bytes, stopper

__all__ = [
    "HEAD_BYTES",
    "MAX_PIXELS",
    "MAX_SIDE",
    "ImageFacts",
    "describe",
    "image_output",
    "image_type",
    "inspect_image",
    "read_head",
    "read_image",
]

HEAD_BYTES = 16
"""Bytes read to tell an image from other files."""

MAX_SIDE = 8000
"""The most pixels an image may have a side (the Anthropic API refuses larger ones)."""

MAX_PIXELS = 25_000_000
"""The most pixels an image may have in all: decoding holds them (up to 4 bytes each, 100 MB),
and a small file can hold a huge, flat image. A 6000x4000 photo fits; the providers scale
anything above about 1.2 megapixels down anyway."""

_HEADER_PEEK = 64 * 1024
"""Bytes read to learn the pixels of an image over the size cap (its header)."""

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

_PILLOW_FORMAT = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WEBP",
}
_NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}


def image_type(head: bytes) -> str | None:
    """The MIME type of an image starting with `head` (PNG, JPEG, GIF or WebP), else None."""
    for signature, mime in _SIGNATURES:
        if head.startswith(signature):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_head(path: str) -> bytes:
    """The first `HEAD_BYTES` of the regular file at the resolved `path` (links refused, FIFOs
    and devices refused without blocking, like every read)."""
    fd = open_checked(path, os.O_RDONLY)
    try:
        return os.read(fd, HEAD_BYTES)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class ImageFacts:
    """What is known of an image file: its type, size in bytes and pixels (when known)."""

    mime_type: str
    size: int
    width: int | None = None
    height: int | None = None


def describe(path: str, facts: ImageFacts) -> str:
    """One line naming the image: path, type, pixels when known, bytes."""
    pixels = f", {facts.width}x{facts.height} pixels" if facts.width and facts.height else ""
    return f"[image {path}: {_NAMES[facts.mime_type]}{pixels}, {facts.size} bytes]"


def inspect_image(data: bytes, mime_type: str, *, decode: bool = True) -> tuple[int, int]:
    """The pixels (width, height) of the image `data`; with `decode`, the whole image is decoded
    first. Raises ValueError saying what is wrong: not decodable as `mime_type`, too many
    pixels a side, or (`decode`) corrupt or truncated data."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=[_PILLOW_FORMAT[mime_type]]) as image:
                width, height = image.size
                if width > MAX_SIDE or height > MAX_SIDE:
                    raise ValueError(f"it is {width}x{height} pixels, more than {MAX_SIDE} a side")
                if width * height > MAX_PIXELS:
                    raise ValueError(
                        f"it is {width}x{height} pixels, more than {MAX_PIXELS:,} in all"
                    )
                if decode:
                    image.load()
    except ValueError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise ValueError(str(exc) or type(exc).__name__) from None
    except Image.DecompressionBombWarning as exc:
        raise ValueError(str(exc)) from None
    return width, height


def image_output(
    path: str, mime_type: str, max_bytes: int, check: Callable[[], None]
) -> ToolOutput:
    """`read_file`'s result for the image file at the resolved `path` (see the module
    docstring). Runs in a worker thread; `check` raises once the turn is cancelled."""
    where = [Location(path)]
    size = os.stat(path, follow_symlinks=False).st_size
    if size > max_bytes:
        facts = ImageFacts(mime_type, size)
        try:
            fd = open_checked(path, os.O_RDONLY)
            try:
                head = os.read(fd, _HEADER_PEEK)
            finally:
                os.close(fd)
            width, height = inspect_image(head, mime_type, decode=False)
            facts = ImageFacts(mime_type, size, width, height)
        except (OSError, ValueError):
            pass  # the pixels are a courtesy: the note stands without them
        return ToolOutput(
            f"{describe(path, facts)}\n[not shown: over the {max_bytes}-byte limit for images "
            "sent to the model (`max_image_bytes` in [tools])]",
            locations=where,
        )
    data = read_bytes(path, max_bytes, check)
    try:
        width, height = inspect_image(data, mime_type)
    except ValueError as exc:
        return ToolOutput(
            f"{path} starts like a {_NAMES[mime_type]} image but is not a valid one ({exc}); "
            "not shown",
            failed=True,
            locations=where,
        )
    check()
    facts = ImageFacts(mime_type, len(data), width, height)
    return ToolOutput(
        describe(path, facts),
        locations=where,
        images=(ImageData(base64.b64encode(data).decode("ascii"), mime_type),),
    )


async def read_image(path: str, max_bytes: int, signal: TurnSignal) -> ToolOutput | None:
    """`read_file`'s result when the regular file at the resolved `path` is an image, else None
    (read it as text). OSErrors and refusals of the open propagate as for a text read."""
    head = await in_thread(read_head, path)
    mime_type = image_type(head)
    if mime_type is None:
        return None
    try:
        return await in_thread(image_output, path, mime_type, max_bytes, stopper(signal))
    except Stopped:
        signal.raise_if_aborted()
        raise
