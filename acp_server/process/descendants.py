"""Every descendant of a child we spawned, including those that left its process group.

A group signal misses a descendant that called `setsid()` or `setpgid()`, and a double fork
hands the grandchild to us (the subreaper) with no visible link to the call that started it.
Two things find them:

- The ppid walk: the children of the leader, their children, and so on, read from
  `/proc/<pid>/task/<tid>/children` (or, on a kernel without that file, from the parent
  field of every `/proc/<pid>/stat`). It finds everything that still hangs below the leader.
- The token: every spawn puts a value unique to it in its environment (`TOKEN_VARIABLE`),
  which descendants inherit. A child of ours that is not the leader and carries the token is
  an orphan of this call that was re-parented to us; the walk continues below it.

A process that both leaves the tree early and clears its environment (`env -i` after a
double fork) cannot be attributed to a call; server shutdown still kills it
(`ProcessRegistry.kill_all`). Pids are recorded with their start time, so a recycled pid is
never mistaken for a recorded process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

TOKEN_VARIABLE = "ACP_SERVER_PROCESS_TOKEN"
"""The environment variable that marks every process a spawn started."""


@dataclass(frozen=True)
class ProcStat:
    """The fields of `/proc/<pid>/stat` we use."""

    state: str
    ppid: int
    pgrp: int
    start: int
    """Start time in clock ticks after boot: with the pid, it names one process."""


def new_token() -> str:
    # Not `secrets`: it pulls in hashlib and OpenSSL (about 0.7 MiB of idle memory) for this.
    return os.urandom(12).hex()


def read_stat(pid: int) -> ProcStat | None:
    """The process's stat, or None if it does not exist (or /proc is missing)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ... starttime(22nd)": comm may hold spaces and parentheses.
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    return ProcStat(fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19]))


def is_same(pid: int, start: int) -> ProcStat | None:
    """The stat of `pid` if it is still the process that started at `start` (zombies count)."""
    stat = read_stat(pid)
    return stat if stat is not None and stat.start == start else None


def descendants(leader: int, token: str) -> dict[int, int]:
    """pid -> start time of every descendant of `leader` and of every orphan of ours that
    carries `token`, with their descendants; `leader` itself is not included."""
    me = os.getpid()
    children_of = _children_lister()
    orphans = [pid for pid in children_of(me) if pid != leader and _carries(pid, token)]
    found: dict[int, int] = {}
    pending = [*children_of(leader), *orphans]
    while pending:
        pid = pending.pop()
        if pid in found or pid in (leader, me):
            continue
        stat = read_stat(pid)
        if stat is None:
            continue
        found[pid] = stat.start
        pending.extend(children_of(pid))
    return found


def children(pid: int) -> list[int]:
    """The pids whose parent is `pid`."""
    return _children_lister()(pid)


def _carries(pid: int, token: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return False
    entry = f"{TOKEN_VARIABLE}={token}".encode()
    return entry in environ.split(b"\0")


def _children_from_task_files(pid: int) -> list[int]:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found.extend(int(word) for word in f.read().split())
        except OSError:
            continue
    return found


def _children_from_full_scan() -> dict[int, list[int]]:
    by_parent: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return by_parent
    for name in entries:
        if name.isdigit():
            stat = read_stat(int(name))
            if stat is not None:
                by_parent.setdefault(stat.ppid, []).append(int(name))
    return by_parent


def _children_lister() -> Callable[[int], list[int]]:
    if _HAVE_TASK_CHILDREN:
        return _children_from_task_files
    table = _children_from_full_scan()
    return lambda pid: table.get(pid, [])


def _task_children_supported() -> bool:
    """Whether the kernel has `/proc/<pid>/task/<tid>/children` (CONFIG_PROC_CHILDREN)."""
    return os.path.exists(f"/proc/{os.getpid()}/task/{threading.get_native_id()}/children")


_HAVE_TASK_CHILDREN = _task_children_supported()
