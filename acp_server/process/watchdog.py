"""The watchdog: one small process per agent that stops what the agent's calls left running when
the agent dies without doing it (SIGKILL included).

The agent (`acp_server.process.lifeline`) starts `python -I -S -B watchdog.py FD` once, at its
first spawn, in a session of its own. FD is the read end of a pipe whose write end only the
agent holds (the lifeline). Over it the agent says, one line per message:

- `w TOKEN GRACE` before a call forks: watch the processes carrying `TOKEN` (the value of
  `ACP_SERVER_PROCESS_TOKEN` that call's processes inherit); stop them with GRACE seconds
  between SIGTERM and SIGKILL;
- `g TOKEN PID START` once it runs: its leader is PID, started at START (clock ticks after boot,
  /proc/PID/stat), so a reused pid is never taken for it;
- `f TOKEN` once the agent's runner has joined the call's tree: forget it.

While the agent lives the watchdog only reads those lines: it polls nothing. When the agent
ends, by any means, the kernel closes the write end and the read returns EOF; then, for the
calls still registered, it finds their processes in /proc: each leader that is still the process
registered (pid and start time), the processes of the leader's session (a session leader's
session is its own: every process in it descends from it), every process carrying a registered
token, and every process below one of those. It sends SIGTERM to each leader's process group
and to each of those processes, waits up to the largest GRACE for them to be gone, sends
SIGKILL, and exits. Each signal goes through a pidfd opened before the process's start time is
checked again, so it reaches the process that was checked or nobody; a group is signalled
through its leader's pidfd (`PIDFD_SIGNAL_PROCESS_GROUP`), which names that group even after
the leader exited.

It runs as a script with the interpreter's isolated mode and without `site`, and imports only
C modules (`_signal`, not `signal`, which pulls in `enum`). It must not import anything of the
project. Linux only. See docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

import os
import sys
import time

# The C module: `signal` imports `enum`, which doubles the start-up; no stubs exist.
import _signal  # type: ignore[import-not-found]  # isort: skip

TOKEN_VARIABLE = "ACP_SERVER_PROCESS_TOKEN"
"""As in `acp_server.process.descendants` (this script imports nothing of the project)."""

PIDFD_SIGNAL_PROCESS_GROUP = 4
"""`pidfd_send_signal` flag (Linux 6.9): signal the process group the pidfd's process leads."""

_POLL = 0.02
_KILL_WAIT = 1.0
"""After SIGKILL, how long to wait for the processes to be gone before exiting anyway."""


class Call:
    """What the agent registered for one call."""

    __slots__ = ("grace", "leader")

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.leader: tuple[int, int] | None = None
        """(pid, start time) of the call's leader, once the agent said it."""


def main(argv: list[str]) -> int:
    """Read the lifeline until EOF; then stop what the calls still registered left."""
    if len(argv) != 2:
        os.write(2, b"usage: watchdog.py FD\n")
        return 2
    lifeline = int(argv[1])
    calls: dict[str, Call] = {}
    pending = b""
    while True:
        data = os.read(lifeline, 65536)
        if not data:
            break
        *lines, pending = (pending + data).split(b"\n")
        for line in lines:
            _apply(calls, line.decode("ascii", "replace").split())
    if calls:
        _stop_all(calls)
    return 0


def _apply(calls: dict[str, Call], words: list[str]) -> None:
    """One message of the agent (see the module docstring); a malformed one is ignored."""
    try:
        if words[0] == "w" and len(words) == 3:
            calls[words[1]] = Call(float(words[2]))
        elif words[0] == "g" and len(words) == 4 and words[1] in calls:
            calls[words[1]].leader = (int(words[2]), int(words[3]))
        elif words[0] == "f" and len(words) == 2:
            calls.pop(words[1], None)
    except (IndexError, ValueError):
        pass


def _stop_all(calls: dict[str, Call]) -> None:
    """The agent is gone: SIGTERM, up to the largest grace, SIGKILL, for every call at once."""
    entries = {f"{TOKEN_VARIABLE}={token}".encode() for token in calls}
    leaders = {call.leader for call in calls.values() if call.leader is not None}
    grace = max(call.grace for call in calls.values())
    # A command the agent forked as it died may be between its exec and the set-up of its new
    # environment (empty in /proc for a few microseconds): look again before giving up.
    if not _ours(leaders, entries)[0]:
        time.sleep(_POLL)
    for number, wait in ((_signal.SIGTERM, grace), (_signal.SIGKILL, _KILL_WAIT)):
        deadline = time.monotonic() + wait
        sent: set[tuple[int, int]] = set()
        while True:
            found, groups = _ours(leaders, entries)
            if not found:
                break
            for pid, start in groups - sent:
                _signal_group(pid, start, number)
            for pid, start in found.items() - sent:
                _signal_one(pid, start, number)
            if number == _signal.SIGTERM:  # once each; SIGKILL again to whatever forked since
                sent |= groups | found.items()
            if time.monotonic() >= deadline:
                break
            time.sleep(_POLL)


def _ours(
    leaders: set[tuple[int, int]], entries: set[bytes]
) -> tuple[dict[int, int], set[tuple[int, int]]]:
    """pid -> start time of every live process of the calls; and the (pid, start) of the
    registered leaders that still exist (zombies too: their group may not be empty)."""
    me = os.getpid()
    table: dict[int, tuple[str, int, int, int]] = {}
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and pid != me:
            table[pid] = stat
    groups = {(pid, start) for pid, start in leaders if table.get(pid, ("", 0, 0, -1))[3] == start}
    sessions = {pid for pid, _ in groups}
    seeds = [
        pid
        for pid, (_, _, session, _) in table.items()
        if session in sessions or (entries and _carries(pid, entries))
    ]
    below: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in table.items():
        below.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    while seeds:
        pid = seeds.pop()
        if pid not in found:
            found.add(pid)
            seeds.extend(below.get(pid, ()))
    live = {pid: table[pid][3] for pid in found if table[pid][0] not in ("Z", "X")}
    return live, groups


def _signal_one(pid: int, start: int, number: int) -> None:
    """Signal `pid` if it is still the process that started at `start`."""
    handle = _open(pid)
    try:
        if _stat_start(pid) != start:
            return
        if handle is None:
            os.kill(pid, number)
        else:
            _signal.pidfd_send_signal(handle, number)
    except OSError:
        pass
    finally:
        if handle is not None:
            os.close(handle)


def _signal_group(pid: int, start: int, number: int) -> None:
    """Signal the group led by `pid` if `pid` is still the leader that started at `start`."""
    handle = _open(pid)
    try:
        if _stat_start(pid) != start:
            return
        if handle is not None:
            try:
                _signal.pidfd_send_signal(handle, number, None, PIDFD_SIGNAL_PROCESS_GROUP)
                return
            except OSError as exc:
                if exc.errno != 22:  # EINVAL: a kernel before 6.9; else the group is gone
                    return
        os.killpg(pid, number)  # the leader, checked just now, keeps its group's id taken
    except OSError:
        pass
    finally:
        if handle is not None:
            os.close(handle)


def _open(pid: int) -> int | None:
    """A pidfd for `pid`, or None (gone, or a kernel without pidfds)."""
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """State, ppid, session and start time of `pid` from /proc/PID/stat; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after its last ")".
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    return fields[0].decode(), int(fields[1]), int(fields[3]), int(fields[19])


def _stat_start(pid: int) -> int | None:
    stat = _stat(pid)
    return None if stat is None else stat[3]


def _carries(pid: int, entries: set[bytes]) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return not entries.isdisjoint(f.read().split(b"\0"))
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main(sys.argv))
