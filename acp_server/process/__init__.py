"""The one way to start a child process: nothing a call started outlives the call (a session's
background items outlive the turn that started them, never the session).

`spawn` (MCP servers) and `run_process` on top of it (the bash tool, hooks) start every child
as the leader of its own session and process group (`start_new_session=True`), with a token
in its environment that its descendants inherit. stdin is `/dev/null` (or a pipe the caller
asked for); stdout is always a pipe and stderr a pipe or our fd 2, so no child ever writes
to our fd 1, which carries the protocol.

How a call ends:

- The turn signal aborts or the timeout expires: the tree is stopped. Before every signal
  the descendants are recorded (`descendants`: the ppid walk below the leader, and orphans
  re-parented to us that carry the call's token), so a process that left the group with
  `setsid`, `setpgid` or a double fork is signalled with it: SIGTERM to the group and each
  recorded pid, up to `grace` seconds for all of it to be gone, SIGKILL, then the join.
- The leader exits by itself: whatever is left of the tree (`sleep 300 &` followed by
  `exit`, a detached daemon) gets the same treatment. A call owns everything it started;
  a background item (`background.py`) is the one call its session owns instead.
- The caller's anyio scope is cancelled: the same escalation runs shielded, and the
  cancellation is re-raised afterwards.

The join waits until the group is empty (`killpg(pgid, 0)` fails with ESRCH) and every
recorded pid is gone, reaping exited processes that are our children on the way, and
rescans at the end for processes forked or re-parented meanwhile. It is bounded
(`JOIN_TIMEOUT`); pids still there are reported in `ProcessResult.survivors` and logged.

Every call's tree dies with us even when we are killed with SIGKILL: one watchdog process
per agent (`lifeline.py`, `watchdog.py`), told about each call from before its fork until its
join, stops what is left when a pipe only we hold closes. A session's background items
(`background.py`) are the one kind of call that outlives the turn that started it; their
session stops them.

The registry (`ProcessRegistry`) is created once by the server and passed to everything
that spawns; server shutdown calls its `kill_all`, which refuses later spawns and stops
every live tree with a short grace, so SIGKILL lands before the process exits.

Orphans are re-parented to the nearest subreaper, or to PID 1. `become_subreaper()`, called
once by the server at start-up on Linux, makes us that subreaper, so we reap them within
milliseconds instead of waiting for init, zombies cannot pile up when we run as PID 1, and
a double-forked grandchild stays within our reach. We reap only processes we recorded,
never the group leader (its exit status belongs to the event loop's child watcher) and
never with `waitpid(-1)`.

See docs/rfc/implemented/architecture/2026-11-30-process-groups.md.
"""

from acp_server.process.groups import (
    JOIN_TIMEOUT,
    ProcessRegistry,
    RegistryClosed,
    become_subreaper,
    group_members,
    reap_orphans,
)
from acp_server.process.runner import ProcessResult, run_process
from acp_server.process.spawn import Child, spawn

__all__ = [
    "JOIN_TIMEOUT",
    "Child",
    "ProcessRegistry",
    "ProcessResult",
    "RegistryClosed",
    "become_subreaper",
    "group_members",
    "reap_orphans",
    "run_process",
    "spawn",
]
