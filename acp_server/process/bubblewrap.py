"""Confining a command with bubblewrap (`bwrap`): what the sandbox allows, and whether it works.

`confine` turns an argv into one that runs it under bwrap with the whole file system read-only
except the writable roots, a private `/tmp`, fresh `/dev` and `/proc`, its own pid namespace
whose init dies with bwrap (`--die-with-parent`), its own session (`--new-session`: no
terminal to push input into), and no network unless allowed (`--unshare-net` leaves only a
loopback of its own, so not even the host's 127.0.0.1 is reachable).

bwrap itself is the child `spawn` starts, the leader of the call's process group. The sandboxed
processes are its descendants (in another session), so the runner's ppid walk and token find
them and signal them directly; and when bwrap dies, the kernel kills everything in its pid
namespace. The guarantees of `acp_server.process` hold unchanged.

`BubblewrapProbe` answers, once and lazily, whether bwrap can run here: missing, or unable to
create namespaces (an unprivileged container), it says why. See
docs/rfc/implemented/feature/2026-12-01-command-sandbox.md.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence

import anyio

from acp_server.process.groups import ProcessRegistry
from acp_server.process.runner import run_process

PROBE_TIMEOUT = 5.0
"""How long the probe's `bwrap ... true` may take before the sandbox counts as unusable."""

INSTALL_HINT = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"


HIDDEN = ("/run", "/var/run", "/var/tmp", "/var/lock")
"""Host directories a confined command sees empty (a tmpfs over each): where the host's
services keep their Unix sockets (docker, systemd and D-Bus, ssh and gpg agents)."""

HIDDEN_IN_HOME = (".docker", ".gnupg")
"""Directories of the agent's home hidden the same way (Docker Desktop's and gpg-agent's
sockets); `~/.ssh` too when the network is off (its ControlMaster sockets reach the network)."""

NAME_SERVICE = ("/etc/resolv.conf",)
"""Files a command with the network needs even when they live in a hidden directory (with
systemd-resolved, /etc/resolv.conf links into /run): bound back read-only, alone."""


def hidden_directories(network: bool, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The existing host directories `confine` covers with an empty tmpfs."""
    home = environ.get("HOME", "")
    in_home = [*HIDDEN_IN_HOME, *(() if network else (".ssh",))]
    candidates = [*HIDDEN, environ.get("XDG_RUNTIME_DIR", "")]
    if home.startswith("/"):
        candidates += [os.path.join(home, name) for name in in_home]
    # A symlink (/var/run -> /run) leads into a directory hidden anyway.
    return [
        path
        for path in dict.fromkeys(candidates)
        if path.startswith("/") and os.path.isdir(path) and not os.path.islink(path)
    ]


def confine(
    argv: Sequence[str],
    *,
    bwrap: str,
    cwd: str,
    writable: Sequence[str],
    network: bool,
) -> list[str]:
    """`argv` run by bwrap in `cwd` with only `writable` (existing directories) writable.

    Whoever runs it, root included, the command has no capabilities (`--cap-drop ALL` empties
    the effective and permitted sets, and bwrap's no_new_privs keeps an exec, of a setuid
    binary or by root, from bringing any back): it cannot remount, unmount what hides the
    host's directories, or trace anyone. It has its own IPC namespace (no host SysV shared
    memory, semaphores or message queues) and, without the network, its own network namespace
    (no host abstract Unix sockets either). With the network it shares the host's, abstract
    sockets (X11, D-Bus) included; the permission question says so.
    """
    hidden = hidden_directories(network)
    wrapped = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in hidden:
        wrapped += ["--tmpfs", path]
    if network:
        for name in NAME_SERVICE:
            real = os.path.realpath(name)
            if real != name and any(real.startswith(h + "/") for h in hidden):
                wrapped += ["--ro-bind-try", real, real]
    for path in dict.fromkeys(writable):
        # A root under /tmp (or a hidden directory) would be hidden: bind it after them.
        wrapped += ["--bind", path, path]
    if not network:
        wrapped.append("--unshare-net")
    wrapped += ["--unshare-ipc", "--unshare-pid", "--cap-drop", "ALL"]
    wrapped += ["--die-with-parent", "--new-session", "--chdir", cwd, "--"]
    return wrapped + list(argv)


class BubblewrapProbe:
    """Whether bwrap can confine commands on this machine: asked once, when first needed."""

    def __init__(self, bwrap: str | None = None) -> None:
        self._bwrap = bwrap
        self._answer: tuple[str | None, str] | None = None
        self._lock = anyio.Lock()

    async def check(self, registry: ProcessRegistry | None) -> tuple[str | None, str]:
        """(the bwrap path, "") when it works; (None, why not) otherwise."""
        async with self._lock:
            if self._answer is None:
                self._answer = await self._probe(registry)
            return self._answer

    async def _probe(self, registry: ProcessRegistry | None) -> tuple[str | None, str]:
        bwrap = self._bwrap or shutil.which("bwrap")
        if bwrap is None:
            return None, f"bwrap (bubblewrap) is not installed; {INSTALL_HINT}"
        argv = confine(["true"], bwrap=bwrap, cwd="/", writable=[], network=False)
        try:
            # Unwatched: it dies with us by itself (--die-with-parent), and the watchdog's
            # start would compete with the agent's own start-up (the probe runs before
            # `initialize` is read).
            result = await run_process(
                argv,
                signal=None,
                registry=registry,
                cwd="/",
                timeout=PROBE_TIMEOUT,
                watched=False,
            )
        except OSError as exc:
            return None, f"{bwrap} cannot be started: {exc.strerror or exc}"
        if result.exit_code == 0:
            return bwrap, ""
        said = result.stderr.strip().splitlines()[-1:] or [f"exit status {result.exit_code}"]
        return None, (
            f"{bwrap} cannot create its namespaces here ({said[0][:200]}); in an unprivileged "
            "container, the container itself is the sandbox"
        )


def writable_roots(roots: Sequence[str], extra: Sequence[str]) -> list[str]:
    """The directories a confined command may write: the workspace roots and the configured
    extra paths, each resolved; paths that do not exist are left out (bwrap cannot bind them)."""
    found: list[str] = []
    for path in [*roots, *extra]:
        resolved = os.path.realpath(os.path.expanduser(path))
        if os.path.isdir(resolved) and resolved not in found:
            found.append(resolved)
    return found
