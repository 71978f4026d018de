"""A stand-in for the agent that a test kills with SIGKILL: it becomes the subreaper, as the
server does, starts `bash -c SCRIPT` the way MODE says, writes `started` to stderr once it
did, and waits to be killed. MODE: `spawn` (as an MCP stdio server: `spawn` with a stdin
pipe), `run` (as a hook or a foreground `bash` command: `run_process` with a stdin payload),
`background` (as a background item: `BackgroundItems.start`), `unwatched` (`spawn` without the
watchdog: the measurement of what it is for)."""

from __future__ import annotations

import sys
from subprocess import PIPE

import anyio

from acp_server.process import ProcessRegistry, become_subreaper, run_process, spawn
from acp_server.process.background import BackgroundItems
from acp_server.process.lifeline import LIFELINE


def started() -> None:
    sys.stderr.write("started\n")
    sys.stderr.flush()


async def main(mode: str, script: str) -> None:
    become_subreaper()
    registry = ProcessRegistry()
    argv = ["bash", "-c", script]
    if mode in ("spawn", "unwatched"):
        LIFELINE.enabled = mode == "spawn"
        async with spawn(argv, registry=registry, cwd="/", stdin=PIPE, stderr=None):
            started()
            await anyio.sleep_forever()
        return
    async with anyio.create_task_group() as tg:
        if mode == "run":
            tg.start_soon(
                lambda: run_process(argv, signal=None, registry=registry, cwd="/", stdin_data=b"{}")
            )
        else:
            await BackgroundItems(tg, registry).start(argv, command=script, call_id=None, cwd="/")
        started()
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
