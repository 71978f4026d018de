"""Process groups: signalling, joining and reaping them, the subreaper, and the registry of
live groups that server shutdown stops. See the package docstring for the rules."""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import time
from collections.abc import Collection, Iterable
from signal import SIGKILL, SIGTERM

import anyio

log = logging.getLogger(__name__)

JOIN_TIMEOUT = 5.0
"""How long the join waits, after SIGKILL, for a group to empty before naming survivors."""

_POLL_FIRST = 0.001
_POLL_MAX = 0.02
_POLL_GROWTH = 1.5

_PR_SET_CHILD_SUBREAPER = 36
_HAVE_WAITID = all(hasattr(os, name) for name in ("waitid", "P_PGID", "WNOWAIT"))


class ProcessRegistry:
    """The process groups of the calls currently running, for shutdown.

    `run_process` registers a group right after spawning it and unregisters it once the
    group is joined. `kill_all` stops every group still registered.
    """

    __slots__ = ("_groups",)

    def __init__(self) -> None:
        self._groups: set[int] = set()

    def register(self, pgid: int) -> None:
        self._groups.add(pgid)

    def unregister(self, pgid: int) -> None:
        self._groups.discard(pgid)

    @property
    def groups(self) -> frozenset[int]:
        """The ids of the live groups (each equals its leader's pid)."""
        return frozenset(self._groups)

    def __len__(self) -> int:
        return len(self._groups)

    async def kill_all(self, grace: float = 0.5, join_timeout: float = JOIN_TIMEOUT) -> list[int]:
        """SIGTERM every live group at once, wait up to `grace`, SIGKILL what remains, then
        join them all. Shielded: runs to the end even if the caller is cancelled. Returns
        the pids that survived the join (normally none). The calls that own the groups see
        their leaders die by signal and return on their own.
        """
        with anyio.CancelScope(shield=True):
            survivors = await stop_groups(sorted(self._groups), grace, join_timeout)
        return survivors


default_registry = ProcessRegistry()
"""The registry `run_process` uses unless it is given another one."""


async def kill_all(grace: float = 0.5) -> None:
    """Server shutdown: stop every group of the default registry (`ProcessRegistry.kill_all`)."""
    await default_registry.kill_all(grace)


def become_subreaper() -> bool:
    """Make this process the child subreaper (Linux `PR_SET_CHILD_SUBREAPER`).

    Orphaned descendants are then re-parented to us instead of PID 1, so the join can reap
    them at once. Returns False where unsupported or if the call fails.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    if prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        log.warning("prctl(PR_SET_CHILD_SUBREAPER) failed: %s", os.strerror(ctypes.get_errno()))
        return False
    return True


def reap_orphans(pids: Iterable[int]) -> list[int]:
    """Reap those of `pids` that are exited children of ours; return the ones reaped.

    Never blocks (`WNOHANG`). Pids that are not our children are skipped. Never pass a
    pid whose exit status the event loop waits for (a `run_process` group leader).
    """
    reaped: list[int] = []
    for pid in pids:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        if done:
            reaped.append(done)
    return reaped


def group_members(pgid: int) -> list[int]:
    """The pids whose process group is `pgid`, zombies included, read from /proc.

    Empty where /proc is missing (not Linux).
    """
    return sorted(pid for pid, _ in _scan_group(pgid))


async def stop_groups(pgids: Collection[int], grace: float, join_timeout: float) -> list[int]:
    """SIGTERM, grace, SIGKILL, join, for all `pgids` at once; each signal only to groups
    that still exist. Returns the pids left in any group after `join_timeout`."""
    live = [pgid for pgid in pgids if _group_alive(pgid)]
    if not live:
        return []
    for pgid in live:
        _signal_group(pgid, SIGTERM)
    live = await _join(live, time.monotonic() + grace)
    if not live:
        return []
    for pgid in live:
        _signal_group(pgid, SIGKILL)
    live = await _join(live, time.monotonic() + join_timeout)
    survivors = sorted(pid for pgid in live for pid in group_members(pgid))
    if live:
        log.warning(
            "process groups %s not empty %.1fs after SIGKILL; surviving pids: %s",
            live,
            join_timeout,
            survivors,
        )
    return survivors


async def _join(pgids: list[int], deadline: float) -> list[int]:
    """Poll until every group is empty or `deadline` passes; return the ones left."""
    interval = _POLL_FIRST
    while True:
        pgids = [pgid for pgid in pgids if _group_alive(pgid)]
        remaining = deadline - time.monotonic()
        if not pgids or remaining <= 0:
            return pgids
        await anyio.sleep(min(interval, remaining))
        interval = min(interval * _POLL_GROWTH, _POLL_MAX)


def _group_alive(pgid: int) -> bool:
    """Reap what we can of the group, then say whether any member (zombies count) is left."""
    _reap_group(pgid)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # a member we may not signal (setuid): it still exists
    return True


def _signal_group(pgid: int, sig: int) -> None:
    if not _group_alive(pgid):
        return  # never signal a group id that may have been recycled
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        log.warning("not permitted to signal process group %d", pgid)


def _reap_group(pgid: int) -> None:
    """Reap exited children of ours in group `pgid`, except its leader (pid == pgid)."""
    if not _HAVE_WAITID:
        me = os.getpid()
        reap_orphans(pid for pid, ppid in _scan_group(pgid) if ppid == me and pid != pgid)
        return
    while True:
        # Peek (WNOWAIT) so the leader, whose status belongs to the event loop, is left alone.
        try:
            info = os.waitid(os.P_PGID, pgid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None or info.si_pid == pgid or not reap_orphans([info.si_pid]):
            return


def _scan_group(pgid: int) -> list[tuple[int, int]]:
    """(pid, ppid) of every process in group `pgid`, from /proc/<pid>/stat."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    members: list[tuple[int, int]] = []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid:
            members.append((int(name), int(fields[1])))
    return members
