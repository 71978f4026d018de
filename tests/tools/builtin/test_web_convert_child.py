"""The conversion child (acp_server/tools/builtin/web_convert_child.py) as a real process: it
converts stdin with the limits it is given, and its processor time is capped, so a conversion
ends even where nothing else stops it. Stopped by a cancel and its time limit, through the
tool: tests/tools/builtin/test_web_convert.py; its memory on hostile pages:
tests/tools/builtin/test_web_hostile.py."""

from __future__ import annotations

import signal
import subprocess
import sys

from acp_server.tools.builtin.web_convert import CHILD

MEMORY = 512 << 20


def run_child(*arguments: str, page: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-P", str(CHILD), *arguments],
        input=page,
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_a_page_is_converted_within_the_output_limit() -> None:
    done = run_child("markdown", "9", str(MEMORY), "10", page=b"<h1>Title</h1><p>words</p>")
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"# Title\n\nw"  # the limit and one byte more: "there was more"


def test_wrong_arguments_say_how_to_call_it() -> None:
    done = run_child("markdown", "9", str(MEMORY))  # no CPU_SECONDS
    assert done.returncode == 2
    assert b"markdown|text OUTPUT_LIMIT MEMORY_LIMIT CPU_SECONDS" in done.stderr


def test_processor_time_past_the_cap_ends_the_process() -> None:
    """A conversion that would never end (a busy loop stands in for the converter) ends by
    SIGXCPU after the processor time it was given, with no core file."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import web_convert_child as child; "
        f"child.cap_resources({MEMORY}, 1)\nwhile True: pass"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", code, str(CHILD.parent)], timeout=60, check=False
    )
    assert done.returncode == -signal.SIGXCPU
