"""Time commands through `run_process` from a given source tree, in one fresh process.

Usage: `python benchmarks/programs/command_starts.py SOURCE_TREE STARTS PROTECTION`.
SOURCE_TREE is a checkout of acp-server (this one, or a worktree of an older commit): its
`acp_server` package is imported instead of the installed one. PROTECTION says what stops a
command if the agent is killed: `keeper` (an older tree's `keeper=True`: a process per
command), `none` (its `keeper=False`), or `watchdog` (a tree with the watchdog: one process per
agent, for every spawn). The program runs `bash -c true` 1 + STARTS times and prints one JSON
line: the first start's ms (an agent's first command: it starts the watchdog), the ms of each
later one, the CPU time of the reaped children per later start, the watchdog's own CPU time,
and the memory of the process that protects a running `sleep 30` (the keeper, or the
watchdog): VmRSS and USS (its private pages, from smaps_rollup). `benchmarks keeper` uses it.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any


def memory_mib(pid: int) -> dict[str, float]:
    """VmRSS and USS (Private_Clean + Private_Dirty) of `pid`, in MiB."""
    rss = uss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(("Private_Clean:", "Private_Dirty:")):
            uss += int(line.split()[1])
    return {"rss_mib": rss / 1024, "uss_mib": uss / 1024}


def cpu_ms(pid: int) -> float:
    """utime + stime of `pid` so far, in ms."""
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    if len(sys.argv) != 4 or sys.argv[3] not in ("keeper", "none", "watchdog"):
        sys.exit(__doc__)
    tree, starts, protection = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    sys.path.insert(0, tree)
    import anyio

    import acp_server
    from acp_server.process import run_process, spawn

    loaded_from = str(Path(acp_server.__file__).resolve().parent.parent)
    options: dict[str, Any] = {} if protection == "watchdog" else {"keeper": protection == "keeper"}

    async def one() -> float:
        started = time.perf_counter()
        result = await run_process(
            ["bash", "-c", "true"], signal=None, registry=None, cwd="/", **options
        )
        assert result.exit_code == 0, result
        return (time.perf_counter() - started) * 1000

    async def protector_memory() -> dict[str, float] | None:
        if protection == "none":
            return None
        async with spawn(["sleep", "30"], registry=None, cwd="/", **options) as child:
            await anyio.sleep(0.5)  # the keeper forked and waits; the watchdog reads
            if protection == "watchdog":
                from acp_server.process.lifeline import LIFELINE

                assert LIFELINE.pid is not None
                return memory_mib(LIFELINE.pid)
            return memory_mib(child.process.pid)

    async def run() -> dict[str, Any]:
        first = await one()
        before = children_cpu_ms()
        later = [await one() for _ in range(starts)]
        children = (children_cpu_ms() - before) / starts
        watchdog_cpu = None
        if protection == "watchdog":
            from acp_server.process.lifeline import LIFELINE

            assert LIFELINE.pid is not None
            watchdog_cpu = cpu_ms(LIFELINE.pid)
        return {
            "first_ms": first,
            "ms": later,
            "children_cpu_ms_per_start": children,
            "watchdog_cpu_ms": watchdog_cpu,
            "protector": await protector_memory(),
            "loaded_from": loaded_from,
        }

    print(json.dumps(anyio.run(run)))


if __name__ == "__main__":
    main()
