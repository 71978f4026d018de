"""The data directory fills up under a running server: the prompt whose turn cannot be saved
answers an error naming the data directory and ENOSPC, the session stays usable, nothing on disk
is damaged, and once there is room the next prompt saves everything, which a reload shows.

Real process, SDK client, and a real full file system: the data directory is a 1 MiB tmpfs
mounted for the test (root only; without root the test is skipped, and
tests/session/test_disk_full.py covers the same journal behaviour by failing `os.write`). A full
tmpfs fails a write the way a full disk does, short writes included, without any hook in the
server.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.support.agent_process import running_agent

pytestmark = pytest.mark.anyio

BIG = "word " * 2000
"""A prompt of 10 KB: its record cannot fit in the slack of the journal's last page."""


@contextlib.contextmanager
def tiny_tmpfs(path: Path) -> Iterator[Path]:
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(directory: Path) -> Path:
    """Write a file until the file system is full; return it."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as file:
        while True:
            try:
                file.write(b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
    return filler


def journal_lines(data: Path, session_id: str) -> list[dict[str, Any]]:
    raw = (data / "sessions" / f"{session_id}.jsonl").read_bytes()
    assert raw.endswith(b"\n"), "a partial line was left at the end of the journal"
    return [json.loads(line) for line in raw.splitlines()]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
async def test_a_full_data_dir_fails_the_prompt_loudly_and_loses_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"responses": [[{"text": "ok"}]]}))
    argv = ["--model", f"script:{model}"]
    with tiny_tmpfs(tmp_path / "data") as data:
        argv += ["--data-dir", str(data)]
        async with running_agent(*argv) as (conn, _, _, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            first = await conn.prompt(session_id=sid, prompt=[text_block("first " + BIG)])
            assert first.stop_reason == "end_turn"
            saved = journal_lines(data, sid)

            filler = fill(data)
            for attempt in ("second ", "third "):
                with pytest.raises(RequestError) as failed:
                    await conn.prompt(session_id=sid, prompt=[text_block(attempt + BIG)])
                error = failed.value
                assert error.code == -32603
                assert str(data) in str(error) and "ENOSPC" in str(error)
                assert error.data == {"dataDir": str(data), "errno": "ENOSPC"}
                # What was saved before is intact; after it come only whole records (those
                # small enough for the last page's slack), never a torn line, and not the
                # prompt that did not fit.
                now = journal_lines(data, sid)
                assert now[: len(saved)] == saved
                assert all(line["type"] != "message/user" for line in now[len(saved) :])

            filler.unlink()
            fourth = await conn.prompt(session_id=sid, prompt=[text_block("fourth")])
            assert fourth.stop_reason == "end_turn"

        async with running_agent(*argv) as (conn, _, _, client):
            await conn.initialize(protocol_version=1)
            await conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[])
    prompts = [
        u.content.text.split()[0]
        for _, u in client.updates
        if u.session_update == "user_message_chunk"
    ]
    assert prompts == ["first", "second", "third", "fourth"]
    answers = [
        u.content.text for _, u in client.updates if u.session_update == "agent_message_chunk"
    ]
    assert answers == ["ok"] * 4
