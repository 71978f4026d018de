"""How the real process ends, and that stdin of every kind and a full stdout are handled.

No test here times the exit: the server's own watchdog ends it `DISPOSE_DEADLINE` (2 s) after
the client is gone whatever happens, so a 2 s bound here would fail exactly when that safety
net works. A test waits for the exit under `HANG_GUARD_S` and shows what it claims by events:
the server's log line saying it reacted, the children's pids gone. How fast the exit is, is a
benchmark's business.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.support.agent_process import SERVER
from tests.support.programs import NOISY_SERVER

F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)  # Linux; the constant is in Python 3.10+

INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
HANG_GUARD_S = 30.0
"""Only a server that never exits takes this long; it is no measure of speed."""


def spawn(
    stdin: int | None = subprocess.PIPE, *args: str, log: Path | None = None
) -> subprocess.Popen[bytes]:
    """The server; with `log`, at log level info with its stderr in that file (read by
    `wait_for_log`; a pipe nobody reads could fill and stall the server)."""
    if log is None:
        return subprocess.Popen(
            [SERVER, *args], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    with log.open("wb") as stderr:
        return subprocess.Popen(
            [SERVER, "--log-level", "info", *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )


def wait_for_log(log: Path, text: str) -> None:
    """Until the server has logged `text` (polls the file; fails after `HANG_GUARD_S`)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while text not in log.read_text(errors="replace"):
        assert time.monotonic() < deadline, f"the server never logged {text!r}"
        time.sleep(0.02)


def read_frame(proc: subprocess.Popen[bytes]) -> dict[str, object]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "the server closed stdout"
    frame: dict[str, object] = json.loads(line)
    return frame


def wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> int:
    try:
        return proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stdin_eof_answers_everything_then_exits_0(tmp_path: Path) -> None:
    lines = [
        INITIALIZE,
        b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"%s","mcpServers":[]}}\n'
        % str(tmp_path).encode(),
        b"garbage\n",
    ]
    proc = subprocess.run(
        [SERVER], input=b"".join(lines), capture_output=True, timeout=10, check=False
    )
    assert proc.returncode == 0
    frames = [json.loads(line) for line in proc.stdout.splitlines()]
    responses = [f for f in frames if "method" not in f]
    assert sorted(str(f["id"]) for f in responses) == ["0", "1", "None"]


@pytest.mark.parametrize("kind", ["regular file", "/dev/null"])
def test_stdin_that_epoll_refuses_is_read_in_a_thread(tmp_path: Path, kind: str) -> None:
    if kind == "regular file":
        source = tmp_path / "in.jsonl"
        source.write_bytes(INITIALIZE)
    else:
        source = Path(os.devnull)
    with source.open("rb") as stdin:
        proc = subprocess.run([SERVER], stdin=stdin, capture_output=True, timeout=10, check=False)
    assert proc.returncode == 0
    expected = 1 if kind == "regular file" else 0
    assert len(proc.stdout.splitlines()) == expected


def test_stdin_tty_is_read_and_sigint_on_a_terminal_stops_the_server() -> None:
    leader, follower = os.openpty()
    with spawn(follower) as proc:
        os.close(follower)
        try:
            os.write(leader, INITIALIZE)
            assert read_frame(proc)["id"] == 0
            proc.send_signal(signal.SIGINT)
            assert wait_exit(proc, HANG_GUARD_S) == 0
        finally:
            os.close(leader)


def test_started_in_a_terminal_it_says_what_it_is_on_stderr_only(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    leader, follower = os.openpty()
    with (
        log.open("wb") as stderr,
        subprocess.Popen([SERVER], stdin=follower, stdout=subprocess.PIPE, stderr=stderr) as proc,
    ):
        os.close(follower)
        try:
            wait_for_log(log, "an editor starts it")
            os.write(leader, INITIALIZE)
            assert read_frame(proc)["id"] == 0  # stdout's first line is the answer
            proc.send_signal(signal.SIGINT)
            assert wait_exit(proc, HANG_GUARD_S) == 0
        finally:
            os.close(leader)
        assert proc.stdout is not None and proc.stdout.read() == b""
    shown = log.read_text()
    for how in ("acp-server setup", "acp-server doctor", "examples/tour/tour.jsonl"):
        assert how in shown


def test_on_pipes_it_says_nothing_of_terminals(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    with spawn(log=log) as proc:
        assert proc.stdin is not None
        proc.stdin.write(INITIALIZE)
        proc.stdin.close()
        assert read_frame(proc)["id"] == 0
        assert wait_exit(proc, HANG_GUARD_S) == 0
    assert "an editor starts it" not in log.read_text()


def test_sigint_on_pipes_is_ignored(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    with spawn(log=log) as proc:
        assert proc.stdin is not None
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        assert read_frame(proc)["id"] == 0
        proc.send_signal(signal.SIGINT)
        wait_for_log(log, f"ignoring signal {int(signal.SIGINT)}")  # the handler has run
        assert proc.poll() is None, "SIGINT from a pipe client's terminal must not kill us"
        proc.stdin.write(INITIALIZE.replace(b'"id":0', b'"id":1'))
        proc.stdin.flush()
        assert read_frame(proc)["id"] == 1
        proc.stdin.close()
        assert wait_exit(proc, HANG_GUARD_S) == 0


def test_sigterm_while_a_read_blocks_exits_0(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    with spawn(log=log) as proc:
        assert proc.stdin is not None
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        read_frame(proc)  # stdin stays open with nothing to read
        proc.send_signal(signal.SIGTERM)
        assert wait_exit(proc, HANG_GUARD_S) == 0
    # The event loop took the signal while the read was pending (a blocked loop never would,
    # and no watchdog would start: the watchdog is started by this very step).
    assert "client gone (SIGTERM): disposing" in log.read_text()


def test_client_closing_our_stdout_while_idle_ends_the_process() -> None:
    with spawn() as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        read_frame(proc)
        proc.stdout.close()  # the client is gone; stdin stays open, so no EOF tells us
        assert wait_exit(proc, HANG_GUARD_S) == 0


def test_sigterm_with_a_full_unread_stdout_still_exits(tmp_path: Path) -> None:
    # 20,000 bad lines produce far more error output than a pipe holds; nobody reads it. A
    # writer that blocked the event loop could not react to SIGTERM.
    log = tmp_path / "stderr.log"
    with spawn(log=log) as proc:
        assert proc.stdin is not None
        # Started first: a SIGTERM before the server has its handler would just kill it (on a
        # loaded machine start-up takes longer than the pause below).
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        read_frame(proc)
        os.set_blocking(proc.stdin.fileno(), False)
        payload = b"x\n" * 20_000
        with contextlib.suppress(BlockingIOError):
            proc.stdin.write(payload)
        wait_until_full(proc)
        proc.send_signal(signal.SIGTERM)
        assert wait_exit(proc, HANG_GUARD_S) == 0
    assert "client gone (SIGTERM): disposing" in log.read_text()


def wait_until_full(proc: subprocess.Popen[bytes]) -> None:
    """Until the server's stdout pipe is at least half full. Its writer has megabytes more
    to write and nobody reads, so from here the pipe fills and the writer waits (a full pipe
    may still hold less than its capacity: a write that does not fit in a page's rest takes a
    new page)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    capacity = fcntl.fcntl(fd, F_GETPIPE_SZ)
    deadline = time.monotonic() + HANG_GUARD_S
    while (pending := _unread(fd)) < capacity // 2:
        assert time.monotonic() < deadline, f"stdout never filled: {pending} of {capacity}"
        time.sleep(0.02)


def _unread(fd: int) -> int:
    buffer = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buffer)
    return buffer[0]


def test_stray_print_and_child_output_never_reach_the_protocol_stream() -> None:
    driver = NOISY_SERVER
    proc = subprocess.run(
        [sys.executable, driver],
        input=INITIALIZE + INITIALIZE.replace(b'"id":0', b'"id":1'),
        capture_output=True,
        timeout=10,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [0, 1]
    for noise in (b"stray print", b"raw fd 1 write", b"child output"):
        assert noise not in proc.stdout
        assert noise in proc.stderr


def test_sigterm_during_a_running_tool_reaps_its_processes(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"sleep 300 & echo $! >> {pids}; sleep 300 & echo $! >> {pids}; wait"
    model = tmp_path / "model.json"
    model.write_text(
        json.dumps(
            {"responses": [[{"tool_call": {"name": "bash", "arguments": {"command": command}}}]]}
        )
    )
    env = {**os.environ, "ACP_SERVER_SANDBOXED": "1"}
    args = [SERVER, "--model", f"script:{model}", "--mode", "bypass"]
    with subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdin is not None
        proc.stdin.write(INITIALIZE)
        new = {"cwd": str(tmp_path), "mcpServers": []}
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}).encode()
            + b"\n"
        )
        proc.stdin.flush()
        read_frame(proc)
        sid = read_frame(proc)["result"]["sessionId"]  # type: ignore[index]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        proc.stdin.write(
            json.dumps(
                {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
            ).encode()
            + b"\n"
        )
        proc.stdin.flush()
        deadline = time.monotonic() + HANG_GUARD_S
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert time.monotonic() < deadline, "the tool never started its processes"
            time.sleep(0.02)
        children = [int(p) for p in pids.read_text().split()]
        proc.send_signal(signal.SIGTERM)
        assert wait_exit(proc, HANG_GUARD_S) == 0
    for pid in children:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_more_sessions_than_the_soft_open_file_limit_all_open(tmp_path: Path) -> None:
    import resource

    def low_limit() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))

    lines = [INITIALIZE] + [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "session/new",
                "params": {"cwd": str(tmp_path), "mcpServers": []},
            }
        ).encode()
        + b"\n"
        for i in range(1, 201)
    ]
    proc = subprocess.run(
        [SERVER, "--model", "echo", "--data-dir", str(tmp_path / "data")],
        input=b"".join(lines),
        capture_output=True,
        timeout=60,
        check=False,
        preexec_fn=low_limit,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    created = [a for a in answers if "result" in a and "sessionId" in a["result"]]
    assert len(created) == 200
