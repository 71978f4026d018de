"""The watchdogs (acp_server/process/watchdog.py) of an agent process, found in /proc."""

from __future__ import annotations

import os


def watchdogs(agent: int) -> list[int]:
    """The pids of the live watchdogs whose parent is `agent`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        alive = int(fields[1]) == agent and fields[0] not in (b"Z", b"X")
        if alive and any(arg.endswith(b"/watchdog.py") for arg in argv):
            found.append(int(name))
    return found
