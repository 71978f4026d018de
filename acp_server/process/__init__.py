"""The one runner for child processes: nothing a call started outlives the call.

Every child is the leader of its own session and process group (`start_new_session=True`),
so one `os.killpg` reaches the whole tree it builds. stdin is `/dev/null` (or a pipe that
carries `stdin_data` and is then closed); stdout and stderr are always pipes, so no child
ever writes to our fd 1, which carries the protocol.

How a call ends:

- The turn signal aborts or the timeout expires: SIGTERM to the group, up to `grace`
  seconds for it to empty, SIGKILL, then the join.
- The leader exits by itself: if members of its group are still running (`sleep 300 &`
  followed by `exit`), they get the same treatment. A tool call owns everything it
  started; a background job that should survive the call is out of scope by design.
- The caller's anyio scope is cancelled: the same escalation runs shielded, and the
  cancellation is re-raised afterwards.

The join waits until the group is really empty (`killpg(pgid, 0)` fails with ESRCH),
reaping exited members that are our children on the way. It is bounded (`JOIN_TIMEOUT`);
pids still in the group then are reported in `ProcessResult.survivors` and logged.

Orphans: members whose parent died are re-parented to the nearest subreaper, or to PID 1.
`become_subreaper()` (called once by the server at start-up on Linux) makes us that
subreaper, so we reap them within milliseconds instead of waiting for init, and zombies
cannot pile up when we run as PID 1. We reap only exited members of the group being
joined, never the group leader (its exit status belongs to the event loop's child watcher)
and never with `waitpid(-1)`.

Limitation: a grandchild that calls `setsid()` leaves the group and escapes; only cgroups
would catch it. See docs/rfc/implemented/architecture/2026-11-30-process-groups.md.
"""

from acp_server.process.groups import (
    JOIN_TIMEOUT,
    ProcessRegistry,
    become_subreaper,
    default_registry,
    group_members,
    kill_all,
    reap_orphans,
)
from acp_server.process.runner import ProcessResult, run_process

__all__ = [
    "JOIN_TIMEOUT",
    "ProcessRegistry",
    "ProcessResult",
    "become_subreaper",
    "default_registry",
    "group_members",
    "kill_all",
    "reap_orphans",
    "run_process",
]
