"""Process trees: signalling, joining and reaping a child's group and its recorded
descendants, the subreaper, and the registry of live trees that server shutdown stops. See
the package docstring for the rules."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import sys
import time
from collections.abc import Collection, Iterable, Mapping
from signal import SIGKILL, SIGTERM

import anyio

from acp_server.process.descendants import children, descendants, is_same, read_stat
from acp_server.process.lifeline import LIFELINE

log = logging.getLogger(__name__)

JOIN_TIMEOUT = 5.0
"""How long the join waits, after SIGKILL, for a group to empty before naming survivors."""

_POLL_FIRST = 0.001
_POLL_MAX = 0.02
_POLL_GROWTH = 1.5

_PR_SET_CHILD_SUBREAPER = 36
_HAVE_WAITID = all(hasattr(os, name) for name in ("waitid", "P_PGID", "WNOWAIT"))


class RegistryClosed(RuntimeError):
    """The server is shutting down: no new process may start."""


class ProcessTree:
    """A child we spawned, the leader of process group `pgid`, and every descendant of it
    found so far outside that group (`acp_server.process.descendants`)."""

    __slots__ = ("members", "pgid", "token")

    def __init__(self, pgid: int, token: str) -> None:
        self.pgid = pgid
        self.token = token
        self.members: dict[int, int] = {}
        """pid -> start time of recorded descendants; the leader is never one."""

    def rescan(self) -> None:
        """Record the descendants that exist now (before every signal: a process killed
        first would hand its children to us without a link to this tree)."""
        self.members.update(descendants(self.pgid, self.token))

    def alive(self) -> bool:
        """Reap what we can, forget what is gone, and say whether anything is left (zombies
        count: they are not reaped yet)."""
        me = os.getpid()
        for pid, start in list(self.members.items()):
            stat = is_same(pid, start)
            if stat is not None and stat.state == "Z" and stat.ppid == me and reap_orphans([pid]):
                stat = None
            if stat is None:
                del self.members[pid]
        group = _group_alive(self.pgid)
        return group or bool(self.members)

    def send(self, posix_signal: int) -> None:
        """Signal the group and every recorded descendant that is still the same process."""
        _signal_group(self.pgid, posix_signal)
        for pid, start in list(self.members.items()):
            if is_same(pid, start) is None:
                continue
            try:
                os.kill(pid, posix_signal)
            except ProcessLookupError:
                pass
            except PermissionError:
                log.warning("not permitted to signal process %d", pid)

    def leftovers(self) -> list[int]:
        return sorted({*group_members(self.pgid), *self.members})


class ProcessRegistry:
    """The process trees of the calls currently running, for shutdown.

    One per server, created at start-up and passed to everything that spawns (never found
    through a module global). `spawn` registers a tree right after the fork and unregisters
    it once the tree is joined. `kill_all` closes the registry (later spawns raise
    `RegistryClosed`) and stops every tree still registered.
    """

    __slots__ = ("_closed", "_trees", "environment", "spawning")

    def __init__(self, environment: Mapping[str, str] | None = None) -> None:
        self.environment = environment
        """What a child gets when its caller names no environment (None: ours). The server's
        is its own without the provider key variables (acp_server/cli.py)."""
        self._trees: dict[int, ProcessTree] = {}
        self._closed = False
        self.spawning = 0
        """Spawns between their fork and their `register` (see `reap_strays`)."""

    def register(self, tree: ProcessTree) -> None:
        self._trees[tree.pgid] = tree

    def unregister(self, tree: ProcessTree) -> None:
        if self._trees.get(tree.pgid) is tree:
            del self._trees[tree.pgid]

    @property
    def is_open(self) -> bool:
        return not self._closed

    def check_open(self) -> None:
        if self._closed:
            raise RegistryClosed("the agent is shutting down: no new process may start")

    def reap_strays(self) -> None:
        """Reap every exited child of ours that is not a registered leader: orphans no tree
        recorded (a double fork's middle process, re-parented to us, that exited before any
        scan). Skipped while a spawn is between its fork and its registration: its leader is
        not known yet, and a leader's exit status belongs to the event loop."""
        if self.spawning:
            return
        for pid in children(os.getpid()):
            if pid in self._trees or pid == LIFELINE.pid:  # the watchdog's status is its own
                continue
            stat = read_stat(pid)
            if stat is not None and stat.state == "Z":
                reap_orphans([pid])

    @property
    def groups(self) -> frozenset[int]:
        """The ids of the live groups (each equals its leader's pid)."""
        return frozenset(self._trees)

    def __len__(self) -> int:
        return len(self._trees)

    async def kill_all(self, grace: float = 0.5, join_timeout: float = JOIN_TIMEOUT) -> list[int]:
        """Close the registry; SIGTERM every live tree at once, wait up to `grace`, SIGKILL
        what remains, then join them all; SIGKILL any other child of ours (an orphan whose
        call could not be told, see `descendants`), except the watchdog, which must outlive
        us. Shielded: runs to the end even if the caller is cancelled. Returns the pids that
        survived the join (normally none). The calls that own the trees see their leaders die
        by signal and return on their own; a call still in its own, longer grace is overtaken
        by this one.
        """
        self._closed = True
        with anyio.CancelScope(shield=True):
            survivors = await stop_trees(list(self._trees.values()), grace, join_timeout)
            leaders = {*self._trees, LIFELINE.pid}
            for pid in children(os.getpid()):
                if pid not in leaders:
                    with contextlib.suppress(OSError):
                        os.kill(pid, SIGKILL)
        return survivors


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


async def stop_trees(
    trees: Collection[ProcessTree], grace: float, join_timeout: float
) -> list[int]:
    """SIGTERM, grace, SIGKILL, join, for all `trees` at once; each signal only to what
    still exists, after a rescan for descendants. The join ends with a rescan: a process
    that was forked or re-parented while we signalled is killed and joined too. Returns the
    pids left after `join_timeout`."""
    live = _rescanned(trees)
    if not live:
        return []
    for tree in live:
        tree.send(SIGTERM)
    await _join(live, time.monotonic() + grace)
    live = _rescanned(trees)
    deadline = time.monotonic() + join_timeout
    while live:
        for tree in live:
            tree.send(SIGKILL)
        await _join(live, deadline)
        live = _rescanned(trees)
        if time.monotonic() >= deadline:
            break
    survivors = sorted(pid for tree in live for pid in tree.leftovers())
    if live:
        log.warning(
            "process groups %s not empty %.1fs after SIGKILL; surviving pids: %s",
            [tree.pgid for tree in live],
            join_timeout,
            survivors,
        )
    return survivors


def _rescanned(trees: Collection[ProcessTree]) -> list[ProcessTree]:
    """Rescan every tree; the ones with anything left."""
    for tree in trees:
        tree.rescan()
    return [tree for tree in trees if tree.alive()]


async def _join(trees: list[ProcessTree], deadline: float) -> list[ProcessTree]:
    """Poll until every tree is gone or `deadline` passes; return the ones left."""
    interval = _POLL_FIRST
    while True:
        trees = [tree for tree in trees if tree.alive()]
        remaining = deadline - time.monotonic()
        if not trees or remaining <= 0:
            return trees
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


def _signal_group(pgid: int, posix_signal: int) -> None:
    if not _group_alive(pgid):
        return  # never signal a group id that may have been recycled
    try:
        os.killpg(pgid, posix_signal)
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
        stat = read_stat(int(name)) if name.isdigit() else None
        if stat is not None and stat.pgrp == pgid:
            members.append((int(name), stat.ppid))
    return members
