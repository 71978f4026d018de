"""Request ids outside int64 are refused with -32600 (id null), never echoed; the edges of
int64 are still ids. Through the real process over raw pipes (the SDK client only sends ids it
made itself)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.agent_process import SERVER
from tests.support.wire import validate_agent_frame

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def initialize(request_id: int) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
    )


def answers(tmp_path: Path, lines: list[str]) -> list[dict[str, object]]:
    done = subprocess.run(
        [SERVER, "--model", "echo", "--data-dir", str(tmp_path / "data")],
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=30,
        check=True,
    )
    frames = [json.loads(line) for line in done.stdout.splitlines()]
    for frame in frames:
        validate_agent_frame(frame, "initialize" if "result" in frame else None)
    return frames


@pytest.mark.parametrize("bad", [INT64_MAX + 1, INT64_MIN - 1, 2**64, 10**30])
def test_an_id_outside_int64_is_an_invalid_request_answered_with_a_null_id(
    tmp_path: Path, bad: int
) -> None:
    [frame] = answers(tmp_path, [initialize(bad)])
    assert frame["id"] is None
    error = frame["error"]
    assert isinstance(error, dict) and error["code"] == -32600
    assert "64-bit" in error["data"]


def test_the_edges_of_int64_are_ids_and_the_connection_goes_on(tmp_path: Path) -> None:
    frames = answers(
        tmp_path, [initialize(INT64_MAX), initialize(INT64_MAX + 1), initialize(INT64_MIN)]
    )
    by_id = {f["id"]: f for f in frames}
    assert len(frames) == 3 and set(by_id) == {INT64_MAX, None, INT64_MIN}
    assert "result" in by_id[INT64_MAX] and "result" in by_id[INT64_MIN]
    assert "error" in by_id[None]
