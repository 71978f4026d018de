"""Attacks on the command sandbox (acp_server/process/bubblewrap.py) from inside it, as root
where the tests run as root (CI): no capabilities to undo the read-only mounts, no host Unix
sockets under /run or /var/tmp, no host SysV shared memory, and no host abstract sockets without
the network. Each reproduces an attack that succeeded before the sandbox dropped capabilities,
unshared IPC and hid the host's runtime directories (issue 24, holes 1 to 3)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_server.process import run_process
from acp_server.process.bubblewrap import confine
from tests.support.command_sandbox import needs_bwrap

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux only"),
    needs_bwrap,
]

# The base interpreter, not the venv's link to it: a checkout under /tmp (a fresh clone, say)
# is hidden inside the sandbox, whose /tmp is private. The scripts need only the stdlib.
PYTHON = os.path.realpath(sys.executable)

CONNECT = (
    "import socket, sys\n"
    "family = socket.AF_UNIX\n"
    "for address in sys.argv[1:]:\n"
    "    s = socket.socket(family)\n"
    "    try:\n"
    "        s.connect(address.replace('@', '\\0', 1) if address[0] == '@' else address)\n"
    "        print('reached', address)\n"
    "    except OSError as exc:\n"
    "        print('refused', address, exc.strerror)\n"
)


async def confined(
    ws: Path, argv: list[str], *, network: bool = False
) -> tuple[str, str, int | None]:
    wrapped = confine(argv, bwrap="bwrap", cwd=str(ws), writable=[str(ws)], network=network)
    result = await run_process(wrapped, signal=None, registry=None, cwd=str(ws))
    return result.stdout, result.stderr, result.exit_code


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


async def test_root_cannot_remount_the_read_only_file_system_writable(ws: Path) -> None:
    target = Path("/etc") / f"acp-remount-{ws.parent.name}"
    command = (
        "mount -o remount,rw,bind / 2>&1; mount -o remount,rw /etc 2>&1; "
        f"echo escaped > {target}; grep -E 'CapEff|CapPrm|NoNewPrivs' /proc/self/status"
    )
    try:
        out, _, _ = await confined(ws, ["sh", "-c", command])
        assert not target.exists(), out
        # not one capability, even as root, also after an exec (grep here; mount, which is
        # setuid, above): bwrap's no_new_privs keeps an exec from bringing any back
        assert "CapEff:\t0000000000000000" in out and "CapPrm:\t0000000000000000" in out
        assert "NoNewPrivs:\t1" in out
    finally:
        target.unlink(missing_ok=True)


@pytest.fixture
def host_sockets(ws: Path) -> Iterator[list[str]]:
    """Listening Unix sockets of the host: under /run and /var/tmp (where docker, systemd
    --user and ssh-agent put theirs) and one in the abstract namespace (X11, D-Bus)."""
    name = f"acp-sandbox-test-{os.getpid()}-{ws.parent.name}"
    paths = [f"/run/{name}.sock", f"/var/tmp/{name}.sock", f"@{name}"]
    listeners: list[socket.socket] = []
    try:
        for path in paths:
            s = socket.socket(socket.AF_UNIX)
            s.bind("\0" + path[1:] if path.startswith("@") else path)
            s.listen(8)
            listeners.append(s)
        yield paths
    finally:
        for s in listeners:
            s.close()
        for path in paths:
            if not path.startswith("@"):
                Path(path).unlink(missing_ok=True)


async def test_host_unix_sockets_are_unreachable_without_the_network(
    ws: Path, host_sockets: list[str]
) -> None:
    out, err, _ = await confined(ws, [PYTHON, "-c", CONNECT, *host_sockets])
    assert "reached" not in out, out + err
    assert [line.split()[0] for line in out.splitlines()] == ["refused"] * len(host_sockets)


async def test_with_the_network_host_sockets_under_run_and_var_tmp_stay_hidden(
    ws: Path, host_sockets: list[str]
) -> None:
    pathname = [p for p in host_sockets if not p.startswith("@")]
    out, err, _ = await confined(ws, [PYTHON, "-c", CONNECT, *pathname], network=True)
    assert "reached" not in out, out + err
    assert [line.split()[0] for line in out.splitlines()] == ["refused"] * len(pathname)


async def test_the_sandbox_still_reads_the_system_and_resolves_names_with_the_network(
    ws: Path,
) -> None:
    command = "cat /etc/resolv.conf >/dev/null && ls /usr/bin >/dev/null && echo ok"
    out, err, code = await confined(ws, ["sh", "-c", command], network=True)
    assert (out, code) == ("ok\n", 0), err


IPC_CREAT, IPC_RMID = 0o1000, 0

SHM = (
    "import ctypes, ctypes.util, sys\n"
    "libc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)\n"
    "libc.shmat.restype = ctypes.c_void_p\n"
    "shmid = libc.shmget(int(sys.argv[1]), 0, 0)\n"
    "if shmid < 0:\n"
    "    print('no segment', ctypes.get_errno())\n"
    "else:\n"
    "    address = libc.shmat(shmid, None, 0)\n"
    "    ctypes.memmove(address, b'sandbox', 7)\n"
    "    print('wrote')\n"
)


async def test_the_hosts_sysv_shared_memory_is_out_of_reach(ws: Path) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    key = 0x41430000 + (os.getpid() & 0xFFFF)
    shmid = libc.shmget(key, 4096, IPC_CREAT | 0o600)
    assert shmid >= 0, os.strerror(ctypes.get_errno())
    try:
        address = libc.shmat(shmid, None, 0)
        ctypes.memmove(address, b"host\0\0\0", 7)
        out, err, _ = await confined(ws, [PYTHON, "-c", SHM, str(key)])
        assert "wrote" not in out and "no segment" in out, out + err
        assert ctypes.string_at(address, 4) == b"host"
        libc.shmdt(ctypes.c_void_p(address))
    finally:
        libc.shmctl(shmid, IPC_RMID, None)
