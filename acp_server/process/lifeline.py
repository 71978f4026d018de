"""The agent's side of the watchdog (`watchdog.py`): one process per agent that stops what the
agent's calls left running when the agent dies without doing it, SIGKILL included.

`LIFELINE` is this process's one `Lifeline`: the watchdog watches a process, and this is the
process it watches (a registry, made per server, would start one watchdog per registry and
none for a call without one). `spawn` tells it about every call: `watch` before the fork (the
call's token), `identify` once the leader runs (its pid and start time), `forget` once the
call's tree is joined. Each is one line written to the lifeline pipe, shorter than PIPE_BUF, so
it is written whole or not at all, without blocking.

The watchdog starts at the first `watch`, not before: an agent that never runs a command never
pays for it. It leads a session of its own (a signal to the agent's process group does not
reach it), gets no environment (no key leaves the agent) and `/dev/null` for its standard
streams (never our fd 1, which carries the protocol). The commands stay the agent's own
children: the runner, its join and its reaping are as they would be without the watchdog.

If the watchdog ends while the agent lives (a user killed it), a thread that waits on its pidfd
hears it (else the next write fails), logs it, and starts a new one with the calls still
registered. A watchdog that stopped reading (stopped by SIGSTOP, say: the pipe fills) is killed
and replaced the same way. Its write end is never closed while it might live: that EOF would be
read as the agent's death. See docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

WATCHDOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "watchdog.py")
"""The watchdog script (`acp_server.process.watchdog`), run by path: it imports nothing of ours."""

_DEATH_WAIT = 1.0
"""How long to wait for a watchdog we killed to be gone before closing its pipe."""


@dataclass(frozen=True)
class _Watchdog:
    """One running watchdog: its process, a pidfd for it, and our end of its lifeline."""

    process: subprocess.Popen[bytes]
    pidfd: int | None
    lifeline: int


class Lifeline:
    """The pipe to this process's watchdog and the calls it watches (see the module docstring)."""

    def __init__(self, program: str = WATCHDOG) -> None:
        self._program = program
        self._lock = threading.Lock()
        self._calls: dict[str, list[bytes]] = {}
        """token -> the lines that told the watchdog about the call (told again to a new one)."""
        self._watchdog: _Watchdog | None = None
        self.enabled = sys.platform.startswith("linux") and os.path.isdir("/proc/self")

    @property
    def pid(self) -> int | None:
        """The running watchdog's pid (the registry never reaps or kills it)."""
        watchdog = self._watchdog
        return None if watchdog is None else watchdog.process.pid

    def watch(self, token: str, grace: float) -> None:
        """Before a call forks: if we die, its processes (carrying `token`) get SIGTERM,
        `grace` seconds, SIGKILL. Raises `OSError` if no watchdog can be started."""
        if self.enabled:
            with self._lock:
                self._calls[token] = []
                self._tell(f"w {token} {grace:g}\n".encode(), token)

    def identify(self, token: str, pid: int) -> None:
        """Once the call's leader runs: name it by pid and start time. Nothing if it already
        exited, or if `pid` is no longer a child of ours (then it is not the leader)."""
        stat = _stat(pid) if self.enabled else None
        if stat is not None and stat[0] == os.getpid():
            with self._lock:
                if token in self._calls:
                    self._tell_or_log(f"g {token} {pid} {stat[1]}\n".encode(), token)

    def forget(self, token: str) -> None:
        """The call's tree is joined: nothing of it is left to stop."""
        with self._lock:
            if self._calls.pop(token, None) is not None and self._watchdog is not None:
                self._tell_or_log(f"f {token}\n".encode(), None)

    def _tell_or_log(self, line: bytes, token: str | None) -> None:
        """`_tell` for a call that runs already: a watchdog that cannot be replaced is
        logged, and the next call tries again."""
        try:
            self._tell(line, token)
        except OSError as exc:
            log.error("%s; the calls running are not watched until the next one", exc)

    def _tell(self, line: bytes, token: str | None) -> None:
        """Record `line` under `token` and tell the watchdog, starting one if none runs or
        the one running is lost (once: a watchdog that cannot start is not retried here)."""
        if token is not None:
            self._calls[token].append(line)
        watchdog = self._watchdog
        if watchdog is not None:
            why = _write(watchdog, line)
            if why is None:
                return
            self._lose(watchdog, why)
        if self._calls:
            self._start()  # tells it every call, this line included

    def _start(self) -> None:
        """Start a watchdog and tell it every call registered."""
        reading, writing = os.pipe()  # both close-on-exec: no command inherits them
        try:
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", self._program, str(reading)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env={},
                pass_fds=(reading,),
                start_new_session=True,
            )
        except OSError as exc:
            os.close(writing)
            raise OSError(exc.errno, f"the watchdog could not start ({exc.strerror})") from exc
        finally:
            os.close(reading)  # ours would keep the pipe open after the watchdog's death
        os.set_blocking(writing, False)
        try:
            pidfd: int | None = os.pidfd_open(process.pid)
        except OSError:
            pidfd = None  # no pidfds (Linux before 5.3): the next write notices its end
        watchdog = _Watchdog(process, pidfd, writing)
        self._watchdog = watchdog
        if pidfd is not None:
            name = f"watchdog {process.pid}"
            threading.Thread(target=self._wait, args=(watchdog,), name=name, daemon=True).start()
        for lines in self._calls.values():
            for line in lines:
                why = _write(watchdog, line)
                if why is not None:
                    self._lose(watchdog, why)
                    return

    def _wait(self, watchdog: _Watchdog) -> None:
        """In a thread: wait for the watchdog to end. Unless it was replaced on purpose, say
        so, and start a new one at once if a signal ended it (a user killed it) and calls are
        registered; one that exited by itself (it could not run) waits for the next call."""
        assert watchdog.pidfd is not None
        _wait_readable(watchdog.pidfd, None)
        with self._lock:
            try:
                if self._watchdog is watchdog:
                    self._lose(watchdog, "it ended")
                    status = watchdog.process.returncode
                    if self._calls and status is not None and status < 0:
                        self._start()
            except OSError as exc:
                log.error("%s; the calls running are not watched until the next one", exc)
            finally:
                os.close(watchdog.pidfd)

    def _lose(self, watchdog: _Watchdog, why: str) -> None:
        """Stop `watchdog` for good (SIGKILL, harmless if it is gone); once it is gone and
        reaped, close its lifeline (before that, the EOF would read as our death)."""
        process = watchdog.process
        if watchdog.pidfd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(watchdog.pidfd, signal.SIGKILL)
            _wait_readable(watchdog.pidfd, _DEATH_WAIT)
        else:
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(_DEATH_WAIT)
        status = process.poll()
        if status is not None:
            os.close(watchdog.lifeline)
        self._watchdog = None  # only now: until it is reaped, the registry leaves it alone
        log.warning(
            "the watchdog (pid %d) that stops our commands if the agent is killed is lost: "
            "%s (exit status %s)",
            process.pid,
            why,
            status,
        )


def _wait_readable(fd: int, timeout: float | None) -> None:
    """Wait until `fd` is readable (a pidfd is once its process ended), at most `timeout`
    seconds (None: no limit). With poll: select refuses a descriptor numbered 1024 or more,
    which an agent with a raised RLIMIT_NOFILE and many files open gets."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    poller.poll(None if timeout is None else timeout * 1000)


def _write(watchdog: _Watchdog, line: bytes) -> str | None:
    """Write `line` whole to the watchdog; None, or why it could not be written."""
    try:
        os.write(watchdog.lifeline, line)
    except BrokenPipeError:
        return "its lifeline is closed"
    except BlockingIOError:
        return "it stopped reading its lifeline"
    return None


def _stat(pid: int) -> tuple[int, int] | None:
    """(ppid, start time) of `pid` from /proc/PID/stat; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    return (int(fields[1]), int(fields[19])) if len(fields) >= 20 else None


LIFELINE = Lifeline()
"""This process's lifeline (see the module docstring)."""
