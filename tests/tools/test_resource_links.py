"""Files a prompt links to (acp_server/tools/resource_links.py): a `file://` link inside the
workspace becomes the file's text, capped with a note; a link outside it, to a file that is
gone, or to a FIFO (which would block) stays a link with a note saying why it was not read;
other links and parts pass unchanged. As the toolbox offers it: tests/tools/test_toolbox.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_server.session import records as rec
from acp_server.tools import resource_links
from acp_server.tools.resource_links import read_resource_links
from acp_server.tools.workspace import PathRoots

pytestmark = pytest.mark.anyio


def link(path: Path | str) -> rec.ResourceLinkPart:
    return rec.ResourceLinkPart(uri=f"file://{path}", name=Path(path).name, mime_type="text/plain")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "ws"
    root.mkdir()
    return root


async def test_a_link_inside_the_workspace_becomes_the_files_text(workspace: Path) -> None:
    (workspace / "notes.md").write_text("hello\n")
    [part] = await read_resource_links([link(workspace / "notes.md")], PathRoots(str(workspace)))
    assert part == rec.ResourcePart(
        uri=f"file://{workspace}/notes.md", text="hello\n", mime_type="text/plain"
    )


async def test_a_percent_encoded_path_is_read(workspace: Path) -> None:
    (workspace / "my notes.md").write_text("spaced\n")
    uri = rec.ResourceLinkPart(uri=f"file://{workspace}/my%20notes.md", name="my notes.md")
    [part] = await read_resource_links([uri], PathRoots(str(workspace)))
    assert isinstance(part, rec.ResourcePart) and part.text == "spaced\n"


async def test_a_long_file_is_cut_at_the_limit_with_a_note(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resource_links, "RESOURCE_LINK_LIMIT", 8)
    (workspace / "long.txt").write_text("0123456789abc")
    [part] = await read_resource_links([link(workspace / "long.txt")], PathRoots(str(workspace)))
    assert isinstance(part, rec.ResourcePart)
    assert part.text == "01234567\n[truncated after 8 bytes]"


async def test_links_that_are_not_read_stay_links_with_a_note_saying_why(
    workspace: Path,
) -> None:
    outside = workspace.parent / "secret.txt"
    outside.write_text("no\n")
    os.mkfifo(workspace / "pipe")
    parts = [link(outside), link(workspace / "gone.txt"), link(workspace / "pipe")]
    read = await read_resource_links(parts, PathRoots(str(workspace)))
    assert read[0::2] == parts
    notes = [p.text for p in read[1::2] if isinstance(p, rec.TextPart)]
    assert notes[0] == f"[file://{outside} is outside the workspace: not read]"
    assert notes[1] == f"[file://{workspace}/gone.txt could not be read: No such file or directory]"
    assert notes[2].startswith(f"[file://{workspace}/pipe was not read: ")


async def test_other_parts_and_links_pass_unchanged(workspace: Path) -> None:
    parts: list[rec.Part] = [
        rec.TextPart(text="look at"),
        rec.ResourceLinkPart(uri="https://example.com/a.md", name="a.md"),
    ]
    assert await read_resource_links(parts, PathRoots(str(workspace))) == parts
