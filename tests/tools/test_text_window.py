"""`read_file` reads only the window it returns: skipping and counting go chunk by chunk, a
1.5 GiB file costs a few MiB (VmHWM of a separate process), a long line is cut at the byte cap,
and the turn signal stops a long scan between two chunks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.tools.builtin.files import ReadFile
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.text_window import TextWindow, take_window, window_of_text
from acp_server.tools.workspace import PathRoots
from tests.support.hostile_files import GIB, sparse_file
from tests.support.tool_call import a_call

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A directory with no symlink on its path (paths on the wire are resolved)."""
    return tmp_path.resolve()


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 20])
def test_the_window_does_not_depend_on_chunk_boundaries(chunk: int) -> None:
    data = "".join(f"line {i}\n" for i in range(1, 51)).encode() + b"tail without newline"

    def window(
        start: int, lines: int, max_bytes: int = 1 << 20, budget: int = 1 << 20
    ) -> TextWindow:
        return take_window(
            chunked(data, chunk),
            start,
            lines,
            max_bytes,
            size=len(data),
            count_budget=budget,
            check=lambda: None,
        )

    middle = window(10, 3)
    assert middle.text == "line 10\nline 11\nline 12\n"
    assert (middle.first, middle.count, middle.total, middle.more) == (10, 3, 51, True)
    last = window(50, 5)
    assert last.text == "line 50\ntail without newline"
    assert (last.count, last.total, last.more) == (2, 51, False)
    past = window(60, 5)
    assert (past.count, past.total) == (0, 51)
    capped = window(1, 100, max_bytes=21)
    assert capped.text == "line 1\nline 2\nline 3\n" and capped.capped
    uncounted = window(1, 2, budget=0)
    assert uncounted.total is None and uncounted.more


def test_a_line_longer_than_the_cap_is_cut_and_said_so() -> None:
    window = window_of_text("x" * 100 + "\nnext\n", 1, 10, 30)
    assert window.text == "x" * 30
    assert window.cut and window.count == 1 and window.total == 2 and window.more


def test_binary_empty_and_crlf() -> None:
    assert window_of_text("a\0b\n", 1, 10, 100).binary
    empty = window_of_text("", 1, 10, 100)
    assert (empty.total, empty.count, empty.more) == (0, 0, False)
    crlf = window_of_text("a\r\nb\r\n", 2, 10, 100)
    assert crlf.text == "b\r\n" and crlf.total == 2


async def test_a_long_line_is_cut_and_the_rest_is_only_counted(root: Path) -> None:
    # Over 8 KiB of text before the hole: the binary sniff looks at the first 8 KiB only.
    head = b"".join(b"line %d\n" % i for i in range(1, 11)) + b"x" * 9000
    sparse_file(root / "big.log", 8 << 20, head, b"\nlast line\n")
    reader = ReadFile(PathRoots(str(root)), LocalFiles(), max_lines=100, max_bytes=4096)
    signal = TurnCancellation().signal
    first = await reader.run({"path": "big.log"}, a_call(), signal)
    assert first.text.startswith("line 1\nline 2\n")
    assert "[lines 1-10 of 12; output capped at 100 lines / 4 KiB; call read_file with " in (
        first.text
    )
    long_line = await reader.run({"path": "big.log", "offset": 11}, a_call(), signal)
    assert long_line.text.startswith("x" * 4096 + "\n[")
    assert "line 11 is longer than 4096 bytes and was cut" in long_line.text
    assert "offset=12" in long_line.text
    last = await reader.run({"path": "big.log", "offset": 12}, a_call(), signal)
    assert last.text == "last line\n[lines 12-12 of 12]"


async def test_a_cancel_stops_a_long_scan_between_chunks(root: Path) -> None:
    # 64 GiB of hole before line 2: finding it would take minutes; a cancel ends it at once.
    sparse_file(root / "huge.txt", 64 * GIB, b"x" * 9000, b"\nline 2\n")
    reader = ReadFile(PathRoots(str(root)), LocalFiles())
    cancellation = TurnCancellation()
    outcome: list[object] = []

    async def read() -> None:
        try:
            outcome.append(
                await reader.run({"path": "huge.txt", "offset": 2}, a_call(), cancellation.signal)
            )
        except TurnAborted as exc:
            outcome.append(exc)

    with anyio.fail_after(60):  # a hang (the old whole-file read) fails instead of stalling
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            await anyio.sleep(0.2)  # the scan is under way in its worker thread
            assert not outcome
            cancellation.abort(UserCancel())
    assert len(outcome) == 1 and isinstance(outcome[0], TurnAborted)


PEAK_PROBE = """
import json, sys, anyio
from acp_server.cancellation import TurnCancellation
from acp_server.tools.builtin.files import ReadFile
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.workspace import PathRoots
from tests.support.tool_call import a_call

def peak_kib():
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking parent (pytest).
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

async def main(root):
    reader = ReadFile(PathRoots(root), LocalFiles())
    before = peak_kib()
    texts = []
    for arguments in ({"path": "big.txt"}, {"path": "big.txt", "offset": 1002}):
        output = await reader.run(arguments, a_call(), TurnCancellation().signal)
        texts.append(output.text[-200:])
    peak = peak_kib()
    print(json.dumps({"before_kib": before, "peak_kib": peak, "texts": texts}))

anyio.run(main, sys.argv[1])
"""


@pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's")
def test_reading_a_1_5_gib_file_costs_a_few_mib(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    head = b"".join(b"line %d of the head\n" % i for i in range(1, 1001))
    tail = b"".join(b"line %d of the tail\n" % i for i in range(1, 1001))
    # 1.5 GiB: the head's lines, one line of 1.5 GiB of zero bytes, the tail's lines.
    sparse_file(root / "big.txt", 3 * GIB // 2, head, b"\n" + tail)
    probe = subprocess.run(
        [sys.executable, "-c", PEAK_PROBE, str(root)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    report = json.loads(probe.stdout)
    first, tail_read = report["texts"]
    assert "line 1000 of the head\n" in first and "lines 1-1000; the file is 1.5 GiB" in first
    assert tail_read.endswith("line 1000 of the tail\n[lines 1002-2001 of 2001]")
    grown_mib = (report["peak_kib"] - report["before_kib"]) / 1024
    print(
        f"read_file on a 1.5 GiB file: peak RSS {report['peak_kib'] / 1024:.0f} MiB "
        f"(+{grown_mib:.1f} MiB over the idle process)"
    )
    assert grown_mib < 32, report  # the whole-file read this replaces peaked at 3.1 GiB
    assert report["peak_kib"] < 128 * 1024, report
