"""Files a prompt links to (`resource_link` with a `file://` URI) read into the prompt: what
the user meant by attaching them. Only files inside the workspace are read, through the same
link-refusing open as the file tools (`local_files.open_checked`), and at most
`RESOURCE_LINK_LIMIT` bytes of each; a link elsewhere stays a link, with a note saying why it
was not read."""

from __future__ import annotations

import os
from urllib.parse import unquote

import anyio

from acp_server.session import records as rec

from .local_files import open_checked
from .workspace import PathRefused, PathRoots

RESOURCE_LINK_LIMIT = 256 * 1024


async def read_resource_links(parts: list[rec.Part], path_roots: PathRoots) -> list[rec.Part]:
    """Resource links to files inside the workspace become their text (what the user meant by
    attaching them); links elsewhere stay links, with a note that they were not read."""
    resolved: list[rec.Part] = []
    for part in parts:
        if not isinstance(part, rec.ResourceLinkPart) or not part.uri.startswith("file://"):
            resolved.append(part)
            continue
        try:
            path = path_roots.resolve(unquote(part.uri.removeprefix("file://")))
        except PathRefused as exc:
            resolved.append(part)
            resolved.append(rec.TextPart(text=f"[{part.uri} was not read: {exc}]"))
            continue
        if not path_roots.contains(path):
            resolved.append(part)
            resolved.append(rec.TextPart(text=f"[{part.uri} is outside the workspace: not read]"))
            continue
        try:
            text = await anyio.to_thread.run_sync(_read_head, path)
        except OSError as exc:
            resolved.append(part)
            resolved.append(rec.TextPart(text=f"[{part.uri} could not be read: {exc.strerror}]"))
            continue
        except PathRefused as exc:  # a FIFO or device (it would block), or a swapped link
            resolved.append(part)
            resolved.append(rec.TextPart(text=f"[{part.uri} was not read: {exc}]"))
            continue
        resolved.append(rec.ResourcePart(uri=part.uri, text=text, mime_type=part.mime_type))
    return resolved


def _read_head(path: str) -> str:
    with open(open_checked(path, os.O_RDONLY), "rb") as file:
        data = file.read(RESOURCE_LINK_LIMIT + 1)
    text = data[:RESOURCE_LINK_LIMIT].decode("utf-8", errors="replace")
    if len(data) > RESOURCE_LINK_LIMIT:
        text += f"\n[truncated after {RESOURCE_LINK_LIMIT} bytes]"
    return text
