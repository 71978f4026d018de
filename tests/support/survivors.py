"""Processes a test started, found wherever they went: they carry a mark unique to the test.

`Escapee` is a copy of `sleep` under a unique name, started by a shell fragment that leaves
the process group or the process tree (`setsid`, `setpgid`, a double fork) with a unique
variable in its environment. `survivors()` scans /proc for both marks, so a process is found
before and after its `exec`, whoever its parent is, and as a zombie (by its name).
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import sys
from pathlib import Path

ESCAPES = ("setsid", "setpgid", "double-fork")
"""The ways a child leaves its call's process group (the double fork also leaves the tree)."""

_LEAVE = {
    "setsid": "os.setsid()",
    "setpgid": "os.setpgid(0, 0)",
    "double-fork": "os.fork() and sys.exit(); os.setsid(); os.fork() and sys.exit()",
}


class Escapee:
    def __init__(self, directory: Path) -> None:
        self.name = "zz" + secrets.token_hex(6)  # under 16 bytes: /proc shows it whole
        self.path = directory / self.name
        sleep = shutil.which("sleep")
        assert sleep is not None
        shutil.copy2(sleep, self.path)
        self.mark = f"ESCAPEE_MARK={self.name}"

    def command(self, how: str, ready: Path, seconds: int = 300) -> str:
        """Shell that starts the escapee the way `how` says, in the background, and returns
        once it is about to exec (then `ready` exists)."""
        code = (
            f"import os, sys; {_LEAVE[how]}; open({str(ready)!r}, 'w').close(); "
            f"os.execv({str(self.path)!r}, [{str(self.path)!r}, '{seconds}'])"
        )
        # The base interpreter, not the venv's link to it: a checkout under /tmp (a fresh clone,
        # say) is hidden inside the command sandbox, whose /tmp is private.
        python = shlex.join([os.path.realpath(sys.executable), "-c", code])
        return (
            f"{self.mark} {python} & while [ ! -e {shlex.quote(str(ready))} ]; do sleep 0.01; done"
        )

    def processes(self) -> list[tuple[int, str, int]]:
        """(pid, state, ppid) of every process with either mark, zombies included."""
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
                with open(f"/proc/{name}/environ", "rb") as f:
                    environ = f.read().split(b"\0")
            except OSError:
                continue
            comm = stat[stat.find(b"(") + 1 : stat.rfind(b")")].decode(errors="replace")
            if comm != self.name and self.mark.encode() not in environ:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            found.append((int(name), fields[0].decode(), int(fields[1])))
        return found

    def survivors(self, unreaped_by: int | None = None) -> list[int]:
        """The marked processes still running, and the marked zombies `unreaped_by` (a pid
        that should have reaped them) still holds."""
        return [
            pid
            for pid, state, ppid in self.processes()
            if state not in ("Z", "X") or ppid == unreaped_by
        ]
