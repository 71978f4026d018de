"""bubblewrap confinement (acp_server/process/bubblewrap.py) with real processes: what a
confined command may write and reach, a turn abort that stops the whole sandboxed tree, and the
probe's answers where bwrap works, is missing, or cannot create namespaces."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnCancellation, UserCancel
from acp_server.process import ProcessResult, run_process
from acp_server.process.bubblewrap import (
    BubblewrapProbe,
    confine,
    hidden_directories,
    writable_roots,
)
from tests.support.command_sandbox import needs_bwrap
from tests.support.processes import DEADLINE, wait_for_pids
from tests.support.survivors import Escapee

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux only"),
    pytest.mark.usefixtures("module_subreaper"),
]


def confined(command: str, ws: Path, *, network: bool = False) -> list[str]:
    return confine(
        ["sh", "-c", command], bwrap="bwrap", cwd=str(ws), writable=[str(ws)], network=network
    )


def test_the_argv_binds_each_root_once_and_unshares_the_network_only_when_asked() -> None:
    argv = confine(
        ["true"], bwrap="/usr/bin/bwrap", cwd="/w", writable=["/w", "/x", "/w"], network=False
    )
    assert argv[:3] == ["/usr/bin/bwrap", "--ro-bind", "/"]
    assert argv.count("--bind") == 2 and "--unshare-net" in argv
    assert argv[-2:] == ["--", "true"]
    # the private /tmp is mounted before the roots, so a root under /tmp stays visible
    assert argv.index("--tmpfs") < argv.index("--bind")
    with_network = confine(["true"], bwrap="bwrap", cwd="/w", writable=[], network=True)
    assert "--unshare-net" not in with_network and "--unshare-pid" in with_network


def test_writable_roots_resolve_paths_and_skip_missing_ones(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    roots = writable_roots(
        [str(tmp_path / "link")], [str(tmp_path / "missing"), str(tmp_path / "real")]
    )
    assert roots == [os.path.realpath(tmp_path / "real")]


@needs_bwrap
async def test_a_confined_command_writes_only_in_its_roots_and_its_private_tmp(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    beside = tmp_path / "beside"  # under the host's /tmp: the sandbox has its own /tmp
    etc = Path("/etc") / f"acp-bwrap-test-{tmp_path.name}"
    command = f"echo in > in.txt; echo t > /tmp/t && cat /tmp/t; echo b > {beside}; echo e > {etc}"
    try:
        result = await run_process(confined(command, ws), signal=None, registry=None, cwd=str(ws))
        assert (ws / "in.txt").read_text() == "in\n"
        assert result.stdout == "t\n"
        assert not beside.exists() and not etc.exists()
        assert "Read-only file system" in result.stderr and result.exit_code != 0
    finally:
        etc.unlink(missing_ok=True)


@needs_bwrap
async def test_the_turn_signal_stops_the_whole_sandboxed_tree(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    escapee = Escapee(ws)  # in the workspace: the sandbox's /tmp is its own
    ready, started = ws / "ready", ws / "started"
    command = (
        f"export {escapee.mark}; sleep 300 & sleep 300 & {escapee.command('setsid', ready)}; "
        f"echo $$ > {started}; wait"
    )
    turn = TurnCancellation()
    results: list[ProcessResult] = []

    async def call() -> None:
        argv = confined(command, ws)
        results.append(await run_process(argv, signal=turn.signal, registry=None, cwd=str(ws)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await wait_for_pids(started, within=DEADLINE)  # a pid of the sandbox's namespace
        assert len(escapee.survivors()) >= 3  # two sleeps and the escapee, at least
        turn.abort(UserCancel())
    [result] = results
    assert result.aborted and result.survivors == []
    assert escapee.survivors(unreaped_by=os.getpid()) == []


@needs_bwrap
async def test_the_probe_finds_a_working_bwrap_once() -> None:
    probe = BubblewrapProbe()
    bwrap, why = await probe.check(None)
    assert bwrap is not None and why == ""
    assert await probe.check(None) == (bwrap, "")


async def test_the_probe_says_bwrap_is_missing_and_how_to_install_it(tmp_path: Path) -> None:
    bwrap, why = await BubblewrapProbe(str(tmp_path / "no-bwrap")).check(None)
    assert bwrap is None
    assert "cannot be started" in why


async def test_the_probe_says_why_bwrap_cannot_create_namespaces(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    bwrap, why = await BubblewrapProbe(str(fake)).check(None)
    assert bwrap is None
    assert "cannot create its namespaces here (bwrap: setting up uid map: Permission denied)" in why
    assert "the container itself is the sandbox" in why


def test_the_hidden_directories_exist_and_ssh_is_hidden_only_without_the_network(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    for name in (".ssh", ".gnupg"):
        (home / name).mkdir(parents=True)
    (tmp_path / "run-link").symlink_to("/run")
    env = {"HOME": str(home), "XDG_RUNTIME_DIR": str(tmp_path / "run-link")}
    offline = hidden_directories(False, env)
    online = hidden_directories(True, env)
    assert str(home / ".ssh") in offline and str(home / ".ssh") not in online
    assert str(home / ".gnupg") in online and str(home / ".docker") not in online  # missing
    assert str(tmp_path / "run-link") not in offline  # a link leads somewhere hidden anyway
    argv = confine(["true"], bwrap="bwrap", cwd="/w", writable=[], network=False)
    assert argv[argv.index("--cap-drop") :][:2] == ["--cap-drop", "ALL"]
    assert "--unshare-ipc" in argv
