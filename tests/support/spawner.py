"""A stand-in for the agent that a test kills with SIGKILL: it becomes the subreaper, as the
server does, starts `bash -c SCRIPT` through `spawn` (under the keeper with `--keeper`),
writes `started` to stdout once the child runs, and waits to be killed."""

from __future__ import annotations

import sys

import anyio

from acp_server.process import ProcessRegistry, become_subreaper, spawn


async def main(script: str, keeper: bool) -> None:
    become_subreaper()
    registry = ProcessRegistry()
    async with spawn(["bash", "-c", script], registry=registry, cwd="/", keeper=keeper):
        sys.stderr.write("started\n")
        sys.stderr.flush()
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], "--keeper" in sys.argv[2:])
