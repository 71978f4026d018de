"""The keeper: a small process between the agent and a command, so the command's tree dies
with the agent even when the agent is killed with SIGKILL.

`spawn(..., keeper=True)` starts `python -I -S -B keeper.py FD GRACE TOKEN -- ARGV...` as the leader
of the call's process group; the keeper forks and execs ARGV in that group and waits. FD is the
read end of a pipe whose write end only the agent holds (the lifeline): when the agent ends, by
any means, the kernel closes the write end and the keeper reads EOF. It then stops what the
command left: SIGTERM to its group and to every process below it or carrying the call's token
(TOKEN, the value of `ACP_SERVER_PROCESS_TOKEN` the runner finds orphans by), up to GRACE
seconds, then SIGKILL. While the agent lives the keeper changes nothing: it exits as soon as the
command does, with the command's exit status (or by the same signal); it ignores SIGTERM, which
the runner sends to the whole group, and ends as the command answers it (by SIGKILL with it,
when the command ignores SIGTERM too). The agent's runner keeps doing the stopping and the join.

It runs as a script with the interpreter's isolated mode and without `site`, and imports only
C modules (`_signal`, not `signal`, which pulls in `enum`): it starts in the time of a bare
interpreter. It must not import anything of the project. Linux and other systems with /proc;
see docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

import os
import select
import sys
import time

# The C module: `signal` imports `enum`, which doubles the keeper's start-up; no stubs exist.
import _signal  # type: ignore[import-not-found]  # isort: skip

TOKEN_VARIABLE = "ACP_SERVER_PROCESS_TOKEN"
"""As in `acp_server.process.descendants` (this script imports nothing of the project)."""

_POLL = 0.02
_KILL_WAIT = 1.0
"""After SIGKILL, how long to wait for the processes to be gone before exiting anyway."""


def main(argv: list[str]) -> int:
    """Run the command below `--`; stop its tree if the lifeline closes first."""
    if len(argv) < 6 or argv[4] != "--":
        os.write(2, b"usage: keeper.py FD GRACE TOKEN -- COMMAND...\n")
        return 2
    lifeline, grace, token, command = int(argv[1]), float(argv[2]), argv[3], argv[5:]
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    _signal.set_wakeup_fd(wake_write)
    # A handler (not SIG_DFL) so that SIGCHLD writes to the wakeup pipe; set before the fork
    # so that an early exit of the child cannot be missed.
    _signal.signal(_signal.SIGCHLD, _ignore)
    pid = os.fork()
    if pid == 0:
        _exec(command, lifeline)
    # The group's SIGTERM is the command's to answer: we end as it ends (by SIGKILL, if it
    # ignores SIGTERM). Only after the fork: an ignored signal stays ignored across exec.
    _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return _mirror(status)
        ready, _, _ = select.select([lifeline, wake_read], [], [])
        if wake_read in ready:
            os.read(wake_read, 512)
        if lifeline in ready and not os.read(lifeline, 512):
            _stop_all(pid, grace, token)
            return 128 + 9  # as if killed by SIGKILL: the agent is gone


def _ignore(number: int, frame: object) -> None:
    """The SIGCHLD handler: the wakeup pipe does the work."""


def _exec(command: list[str], lifeline: int) -> None:
    """In the child: drop the lifeline and the handlers, become the command."""
    try:
        os.close(lifeline)
        _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
        os.execvp(command[0], command)
    except OSError as exc:
        os.write(2, f"cannot run {command[0]}: {exc.strerror or exc}\n".encode())
    os._exit(127)


def _mirror(status: int) -> int:
    """End as the command ended: its exit code, or death by the same signal."""
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return code
    number = -code
    try:
        import resource  # a C module; only here, where it is needed

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file of the keeper
        _signal.signal(number, _signal.SIG_DFL)
    except (OSError, ValueError):
        pass
    os.kill(os.getpid(), number)
    return 128 + number  # a signal whose default is to be ignored


def _stop_all(child: int, grace: float, token: str) -> None:
    """The agent is gone: SIGTERM everything of the call, up to GRACE seconds, SIGKILL."""
    entry = f"{TOKEN_VARIABLE}={token}".encode()
    for number, wait in ((_signal.SIGTERM, grace), (_signal.SIGKILL, _KILL_WAIT)):
        left = _remaining(child, entry)
        deadline = time.monotonic() + wait
        while left and time.monotonic() < deadline:
            _send(number, left)
            time.sleep(_POLL)
            left = _remaining(child, entry)


def _send(number: int, pids: list[int]) -> None:
    # One by one, never to our group: SIGKILL to it would end us before the others.
    for pid in pids:
        try:  # noqa: SIM105 - contextlib imports functools: start-up time
            os.kill(pid, number)
        except OSError:
            pass


def _remaining(child: int, entry: bytes) -> list[int]:
    """Reap our child if it exited; every live process of the call but us: in our group,
    below us, or carrying the call's token (`entry`)."""
    try:  # noqa: SIM105 - contextlib imports functools: start-up time
        os.waitpid(child, os.WNOHANG)
    except ChildProcessError:
        pass
    me, group = os.getpid(), os.getpgid(0)
    parents: dict[int, int] = {}
    found: set[int] = set()
    for pid in _pids():
        stat = _stat(pid)
        if pid == me or stat is None or stat[0] == "Z":
            continue
        parents[pid] = stat[1]
        if stat[2] == group or _carries(pid, entry):
            found.add(pid)
    for pid in parents:
        seen: set[int] = set()
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor not in seen:
            if ancestor == me:
                found.add(pid)
                break
            seen.add(ancestor)
            ancestor = parents.get(ancestor)
    return sorted(found)


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _stat(pid: int) -> tuple[str, int, int] | None:
    """State, ppid and process group of `pid` from /proc/PID/stat; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after its last ")".
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 3:
        return None
    return fields[0].decode(), int(fields[1]), int(fields[2])


def _carries(pid: int, entry: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return entry in f.read().split(b"\0")
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main(sys.argv))
