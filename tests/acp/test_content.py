"""ACP prompt content as the runtime's durable parts (acp_server/acp/content.py): every block
kept with its fields, unset fields as None, and audio (never advertised) described instead of
dropped. Prompts with images and resources through the real process:
tests/e2e/test_images_acp.py and tests/e2e/test_prompt.py."""

from __future__ import annotations

import msgspec

from acp_protocol.content import ContentBlock
from acp_server.acp.content import parts_from_prompt
from acp_server.session import records as rec


def blocks(*json_blocks: str) -> list[ContentBlock]:
    """The blocks a client's `prompt` array decodes to."""
    return msgspec.json.decode(f"[{','.join(json_blocks)}]", type=list[ContentBlock])


def test_each_kind_of_block_becomes_its_part_with_every_field() -> None:
    prompt = blocks(
        '{"type": "text", "text": "look"}',
        '{"type": "image", "data": "iVBO", "mimeType": "image/png", "uri": "file:///a.png"}',
        '{"type": "resource_link", "uri": "file:///b.py", "name": "b.py",'
        ' "mimeType": "text/x-python", "title": "B", "description": "the b", "size": 12}',
        '{"type": "resource", "resource": {"uri": "file:///c.txt", "text": "c",'
        ' "mimeType": "text/plain"}}',
        '{"type": "resource", "resource": {"uri": "file:///d.bin", "blob": "AAE="}}',
    )
    assert parts_from_prompt(prompt) == [
        rec.TextPart(text="look"),
        rec.ImagePart(data="iVBO", mime_type="image/png", uri="file:///a.png"),
        rec.ResourceLinkPart(
            uri="file:///b.py",
            name="b.py",
            mime_type="text/x-python",
            title="B",
            description="the b",
            size=12,
        ),
        rec.ResourcePart(uri="file:///c.txt", text="c", mime_type="text/plain"),
        rec.ResourcePart(uri="file:///d.bin", blob="AAE="),
    ]


def test_fields_left_out_or_null_are_none() -> None:
    prompt = blocks(
        '{"type": "image", "data": "iVBO", "mimeType": "image/png"}',
        '{"type": "resource_link", "uri": "file:///b.py", "name": "b.py", "title": null}',
    )
    assert parts_from_prompt(prompt) == [
        rec.ImagePart(data="iVBO", mime_type="image/png", uri=None),
        rec.ResourceLinkPart(uri="file:///b.py", name="b.py"),
    ]


def test_audio_is_described_not_dropped() -> None:
    prompt = blocks('{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}')
    assert parts_from_prompt(prompt) == [
        rec.TextPart(text="[audio attachment (audio/wav) omitted]")
    ]
