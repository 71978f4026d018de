"""One `web_fetch` in a process of its own, reporting how much its memory grew: run as
`python -m tests.support.fetch_memory WARM_URL URL MAX_BYTES`, it prints one JSON line
`{"growth": BYTES, "failed": BOOL, "text": "..."}` to stdout.

A first fetch of WARM_URL (a small page of the same kind) imports whatever the fetch needs;
then the peak resident size is reset (`/proc/self/clear_refs`, Linux) and the fetch of URL
runs, and `growth` is its peak (VmHWM) minus the resident size before it. No clock is read:
the figure is memory, whatever the machine's load.

The address space is capped at `ADDRESS_SPACE` first, so code that would unpack a bomb whole
fails here with a MemoryError instead of taking the machine's memory.
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import tempfile
from pathlib import Path

import anyio

from acp_server.tools.builtin.web import WebFetch
from acp_server.tools.web_access import WebFetchSettings
from acp_server.tools.workspace import PathRoots
from tests.support.tool_call import a_call
from tests.support.turns import fresh_signal

ADDRESS_SPACE = 3 << 30


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise LookupError(field)


def _reset_peak() -> None:
    """VmHWM starts again from the resident size now (proc(5), `clear_refs` value 5)."""
    Path("/proc/self/clear_refs").write_text("5")


async def _main(warm_url: str, url: str, max_bytes: int) -> dict[str, object]:
    settings = WebFetchSettings(allow_private_addresses=True, max_bytes=max_bytes)
    web = WebFetch(PathRoots(tempfile.gettempdir()), settings)
    warm = await web.run({"url": warm_url}, a_call(), fresh_signal())
    if warm.failed:
        raise RuntimeError(warm.text)
    gc.collect()
    _reset_peak()
    before = _status("VmRSS")
    try:
        output = await web.run({"url": url}, a_call(), fresh_signal())
    except MemoryError:
        return {"growth": None, "failed": True, "text": "MemoryError"}
    return {"growth": _status("VmHWM") - before, "failed": output.failed, "text": output.text}


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    result = anyio.run(_main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
    print(json.dumps(result))
