"""The container engines and the checks of the opt-in image test (`tests/docker/test_image.py`).

What the checks do, and how the test was run on the project's machines: docs/docker.md.

Engines:
- docker, when `docker info` works: `docker build`, then `docker run -i --rm IMAGE ...`.
- podman + buildah otherwise (no Docker engine; plain `podman run` needs cgroups, which the
  project's dev machines lack): `podman build --isolation chroot`, then `buildah from IMAGE`
  and `buildah run --isolation chroot CONTAINER -- acp-server ...` with the input on stdin. The
  base image is `ACP_SERVER_DOCKER_BASE` when set (a local one, for a machine that cannot pull
  `python:3.11-slim`), else the Dockerfile's.

Checks:
1. fixture: initialize, session/new (cwd /tmp) and a session/prompt to `sess_0001` with
   `--model echo --deterministic`, piped in as one JSONL stream that ends in EOF. Every output
   line must be a JSON-RPC 2.0 object, every request answered once without error, the answers
   as expected, and the exit status 0.
2. tour: examples/tour/tour.jsonl (streaming, a tool call with permission, a cancel, a
   restart and session/load), played by the fixture runner (`python -m acp_fixture`) on the
   host with `--server` set to the container command, must match its golden transcript. The
   fixture's directory and the runner's temporary directory are mounted at their own paths;
   the server runs as our uid.
3. workspace: the editor command of docs/docker.md: a host directory mounted at the same
   absolute path and used as working directory and session cwd, the host user's uid and gid
   (`--user`; as root, 1000:1000). A scripted model reads a host file and writes a file,
   which must appear on the host with that content and owner; EOF must end acp-server with 0.
4. pid1: acp-server as PID 1 of its own PID namespace, the way `docker run` starts it (under
   podman: `unshare --pid` + chroot into the container's rootfs, root only). A scripted model
   makes bash tool calls: the tool's parent is PID 1; an orphan left in the tool's process
   group is killed and reaped (no zombie, no stray `sleep`); a `setsid` escapee is reported
   (informational: it leaves a zombie until the container ends). Then SIGTERM from outside
   must end PID 1 with status 0 (waited for under a hang guard: how fast is the watchdog's
   promise, not this test's).
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
JsonObject = dict[str, Any]  # a decoded JSON-RPC frame, or a JSON config object
HANG_GUARD_S = 120.0
"""Only a container that never answers or never exits takes this long."""
PROMPT_TEXT = "hello from the container"

# Model responses for the pid1 check: one per model request of the session's only turn.
PROC_SCAN = (
    'z=0; s=0; for f in /proc/[0-9]*/stat; do read -r pid comm state ppid rest < "$f" '
    '2>/dev/null || continue; [ "$state" = Z ] && z=$((z+1)); '
    '[ "$comm" = \'(sleep)\' ] && s=$((s+1)); echo "proc $pid $comm $state ppid=$ppid"; '
    'done; echo "zombies=$z sleeps=$s"'
)
WORKSPACE_WRITE = {"path": "hello.txt", "content": "written in the container\n"}

PID1_MODEL = {
    "responses": [
        [
            {
                "tool_call": {
                    "name": "bash",
                    "arguments": {"command": "echo ppid=$PPID; (sleep 30 &); echo orphan-started"},
                }
            }
        ],
        [{"tool_call": {"name": "bash", "arguments": {"command": PROC_SCAN}}}],
        # The pause lets the escapee call setsid() before bash exits: a member still in the
        # group when its leader exits is killed with the group.
        [
            {
                "tool_call": {
                    "name": "bash",
                    "arguments": {
                        "command": "setsid sleep 0.3 </dev/null >/dev/null 2>&1 & sleep 0.1; "
                        "echo escapee-started"
                    },
                }
            }
        ],
        [{"tool_call": {"name": "bash", "arguments": {"command": "sleep 1; " + PROC_SCAN}}}],
        [{"text": "done"}],
    ]
}


class Failure(AssertionError):
    """A check failed (an AssertionError, so pytest reports it as a failed test)."""


def log(message: str) -> None:
    print(f"docker-test: {message}", file=sys.stderr, flush=True)


def sh(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    log("$ " + " ".join(argv))
    return subprocess.run(argv, text=True, check=True, **kwargs)  # type: ignore[call-overload,no-any-return]


# ---- engines -------------------------------------------------------------------------------


class Engine:
    """Build, inspect and run the image. Every run gets a fresh container, as `--rm` does."""

    name = ""

    def __init__(self, image: str, base: str | None) -> None:
        self.image = image
        self.base = base

    def build(self) -> None:
        raise NotImplementedError

    def run(self, args: list[str], stdin: str, timeout: float) -> subprocess.CompletedProcess[str]:
        """The entrypoint with `args`, `stdin` piped in whole; wait for the exit."""
        raise NotImplementedError

    def spawn(self, args: list[str], workspace: str, user: str) -> AgentProcess:
        """The entrypoint with `args` as `user`, `workspace` mounted at the same path and
        used as the working directory: the documented editor command."""
        raise NotImplementedError

    def start_pid1(self, args: list[str], files: dict[str, str]) -> AgentProcess | None:
        """The entrypoint as PID 1 of a PID namespace, `files` readable under /smoke."""
        raise NotImplementedError

    def server_command(self, mounts: list[str], workdir: str, user: str) -> list[str]:
        """A command line that starts the entrypoint (arguments to be appended) with each of
        `mounts` (`DIR` or `DIR:ro`) mounted at its own path, for the fixture runner's --server."""
        raise NotImplementedError

    def close(self) -> None:
        pass


def _popen(argv: list[str]) -> subprocess.Popen[str]:
    log("$ " + " ".join(argv))
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


class Docker(Engine):
    name = "docker"

    def __init__(self, image: str, base: str | None) -> None:
        super().__init__(image, base)
        self.tmp = tempfile.mkdtemp(prefix="acp-smoke-")

    def build(self) -> None:
        argv = ["docker", "build", "-t", self.image]
        if self.base:
            argv += ["--build-arg", f"PYTHON_IMAGE={self.base}"]
        sh([*argv, str(ROOT)])

    def run(self, args: list[str], stdin: str, timeout: float) -> subprocess.CompletedProcess[str]:
        argv = ["docker", "run", "-i", "--rm", self.image, *args]
        log("$ " + " ".join(argv) + (" < fixture" if stdin else ""))
        return subprocess.run(argv, input=stdin, text=True, capture_output=True, timeout=timeout)

    def spawn(self, args: list[str], workspace: str, user: str) -> AgentProcess:
        mount = f"{workspace}:{workspace}"
        argv = ["docker", "run", "-i", "--rm", "-v", mount, "-w", workspace, "--user", user]
        return AgentProcess(_popen([*argv, self.image, *args]))

    def server_command(self, mounts: list[str], workdir: str, user: str) -> list[str]:
        volumes = [f"{m.split(':')[0]}:{m}" for m in mounts]
        argv = ["docker", "run", "-i", "--rm", "-w", workdir, "--user", user]
        return [*argv, *(arg for v in volumes for arg in ("-v", v)), self.image]

    def start_pid1(self, args: list[str], files: dict[str, str]) -> AgentProcess | None:
        smoke = Path(self.tmp, "smoke")
        smoke.mkdir(mode=0o755)
        for name, text in files.items():
            Path(smoke, name).write_text(text)
            Path(smoke, name).chmod(0o644)
        name = f"acp-server-smoke-{os.getpid()}"
        argv = ["docker", "run", "-i", "--rm", "--name", name, "-v", f"{smoke}:/smoke:ro"]
        proc = _popen([*argv, self.image, *args])

        def term() -> None:
            sh(["docker", "kill", "--signal", "TERM", name], capture_output=True)

        return AgentProcess(proc, term)

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


class Podman(Engine):
    """podman builds with chroot isolation and buildah runs: plain `podman run` does not work
    without cgroups. Chroot isolation has no PID namespace, so pid1 uses unshare instead."""

    name = "podman"

    def __init__(self, image: str, base: str | None) -> None:
        super().__init__(image, base)
        self.containers: list[str] = []

    def build(self) -> None:
        argv = ["podman", "build", "--isolation", "chroot"]
        if self.base:
            argv += ["--build-arg", f"PYTHON_IMAGE={self.base}"]
        sh([*argv, "-t", self.image, str(ROOT)])

    def _config(self) -> JsonObject:
        argv = ["podman", "image", "inspect", "--format", "{{json .Config}}", self.image]
        config = json.loads(subprocess.run(argv, text=True, capture_output=True, check=True).stdout)
        if not isinstance(config, dict):
            raise Failure(f"podman image inspect: no config object for {self.image}")
        return config

    def _fresh_container(self) -> str:
        argv = ["buildah", "from", "--pull-never", self.image]
        container = sh(argv, capture_output=True).stdout.strip()
        self.containers.append(container)
        return container

    def _buildah_run(self, options: list[str], args: list[str]) -> list[str]:
        entrypoint = self._config()["Entrypoint"]
        container = self._fresh_container()
        run = ["buildah", "run", "--isolation", "chroot", *options, container, "--"]
        return [*run, *entrypoint, *args]

    def run(self, args: list[str], stdin: str, timeout: float) -> subprocess.CompletedProcess[str]:
        argv = self._buildah_run([], args)
        log("$ " + " ".join(argv) + (" < fixture" if stdin else ""))
        return subprocess.run(argv, input=stdin, text=True, capture_output=True, timeout=timeout)

    def spawn(self, args: list[str], workspace: str, user: str) -> AgentProcess:
        options = ["-v", f"{workspace}:{workspace}", "--workingdir", workspace, "--user", user]
        return AgentProcess(_popen(self._buildah_run(options, args)))

    def server_command(self, mounts: list[str], workdir: str, user: str) -> list[str]:
        # One container for every server start of the fixture: its state lives in the
        # mounted data directory, as it would in a volume with `docker run --rm`.
        volumes = [f"{m.split(':')[0]}:{m}" for m in mounts]
        options = [arg for v in volumes for arg in ("-v", v)]
        return self._buildah_run([*options, "--workingdir", workdir, "--user", user], [])

    def start_pid1(self, args: list[str], files: dict[str, str]) -> AgentProcess | None:
        if os.geteuid() != 0 or not shutil.which("unshare"):
            log("pid1: skipped (needs root and unshare to give acp-server a PID namespace)")
            return None
        config = self._config()
        container = self._fresh_container()
        rootfs = sh(["buildah", "mount", container], capture_output=True).stdout.strip()
        smoke = Path(rootfs, "smoke")
        smoke.mkdir(mode=0o755, exist_ok=True)
        for name, text in files.items():
            Path(smoke, name).write_text(text)
            Path(smoke, name).chmod(0o644)
        uid, gid = _lookup_user(Path(rootfs), config.get("User") or "root")
        # What `docker run` does, minus cgroups and the other namespaces: a new PID and mount
        # namespace, /proc and /dev inside the rootfs, then exec (PID 1 stays PID 1) into
        # chroot -> env -> the image's entrypoint, as the image's user, in its WORKDIR, with
        # its environment.
        script = (
            'root=$1; spec=$2; shift 2; mount -t proc proc "$root/proc" && '
            'mount --rbind /dev "$root/dev" && exec chroot --userspec="$spec" "$root" "$@"'
        )
        argv = ["unshare", "--pid", "--fork", "--kill-child", "--mount", "sh", "-c", script]
        argv += ["sh", rootfs, f"{uid}:{gid}", "env", "-i", "-C", config.get("WorkingDir") or "/"]
        proc = _popen([*argv, *(config.get("Env") or []), *config["Entrypoint"], *args])

        def term() -> None:
            # The agent is the child of unshare (which forked it into the new namespace).
            pid = _wait_for_child(proc.pid)
            log(f"kill -TERM {pid}  (PID 1 inside its namespace)")
            os.kill(pid, signal.SIGTERM)

        return AgentProcess(proc, term)

    def close(self) -> None:
        for container in self.containers:
            subprocess.run(["buildah", "rm", container], capture_output=True)
        self.containers.clear()


def _lookup_user(rootfs: Path, user: str) -> tuple[int, int]:
    name, _, group = user.partition(":")
    if name.isdigit():
        return int(name), int(group or name)
    for line in (rootfs / "etc" / "passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == name:
            return int(fields[2]), int(fields[3])
    raise Failure(f"user {user!r} of the image not found in its /etc/passwd")


def _wait_for_child(ppid: int, timeout: float = 5.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path("/proc", entry, "stat").read_text()
                except OSError:
                    continue
                if int(stat[stat.rfind(")") + 2 :].split()[1]) == ppid:
                    return int(entry)
        time.sleep(0.01)
    raise Failure(f"no child of unshare (pid {ppid}) found")


def available_engine() -> tuple[str | None, str]:
    """The engine to use (`docker` or `podman`), or None and why there is none."""
    docker = shutil.which("docker")
    if docker and subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        return "docker", "docker info works"
    missing = [tool for tool in ("podman", "buildah") if not shutil.which(tool)]
    if missing:
        why = "no Docker engine (`docker info` fails or no docker)"
        return None, f"{why}, and no {' or '.join(missing)}"
    if subprocess.run(["podman", "info"], capture_output=True).returncode != 0:
        return None, "no Docker engine, and `podman info` fails"
    return "podman", "no Docker engine: podman builds, buildah runs"


# ---- checks --------------------------------------------------------------------------------


def parse_frames(stdout: str) -> list[JsonObject]:
    frames = []
    for number, line in enumerate(stdout.splitlines(), 1):
        try:
            frame = json.loads(line)
        except ValueError as exc:
            raise Failure(f"output line {number} is not JSON ({exc}): {line[:200]!r}") from None
        if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
            raise Failure(f"output line {number} is not a JSON-RPC 2.0 object: {line[:200]!r}")
        frames.append(frame)
    return frames


def check_fixture(engine: Engine) -> None:
    lines: list[JsonObject] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": 1,
                "clientCapabilities": {},
                "clientInfo": {"name": "docker-smoke", "version": "1"},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": "/tmp", "mcpServers": []},
        },
    ]
    args = ["--model", "echo", "--deterministic"]  # the image is built from this checkout
    lines.append(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {
                "sessionId": "sess_0001",
                "prompt": [{"type": "text", "text": PROMPT_TEXT}],
            },
        }
    )
    fixture = "".join(json.dumps(line) + "\n" for line in lines)
    for line in fixture.splitlines():
        log(f"  > {line}")
    result = engine.run(args, fixture, timeout=HANG_GUARD_S)
    for line in result.stdout.splitlines():
        log(f"  < {line[:160]}{' ...' if len(line) > 160 else ''}")
    if result.stderr.strip():
        log("  stderr: " + result.stderr.strip().replace("\n", "\n  stderr: "))
    if result.returncode != 0:
        raise Failure(f"fixture: acp-server exited with status {result.returncode}")
    frames = parse_frames(result.stdout)
    answers: dict[int, JsonObject] = {}
    for frame in frames:
        if "id" in frame and "method" not in frame:
            if frame["id"] in answers:
                raise Failure(f"fixture: request {frame['id']} answered twice")
            if "error" in frame:
                raise Failure(f"fixture: request {frame['id']} failed: {frame['error']}")
            answers[frame["id"]] = frame["result"]
    expected_ids = {line["id"] for line in lines}
    if set(answers) != expected_ids:
        raise Failure(f"fixture: answers for {sorted(answers)}, expected {sorted(expected_ids)}")
    init = answers[1]
    if init.get("protocolVersion") != 1 or init.get("agentInfo", {}).get("name") != "acp-server":
        raise Failure(f"fixture: unexpected initialize result {init}")
    session_id = answers[2].get("sessionId", "")
    if session_id != "sess_0001":
        raise Failure(f"fixture: unexpected session id {session_id!r}")
    if answers[3].get("stopReason") != "end_turn":
        raise Failure(f"fixture: prompt answered {answers[3]}, expected end_turn")
    text = "".join(
        frame["params"]["update"]["content"]["text"]
        for frame in frames
        if frame.get("method") == "session/update"
        and frame["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
    )
    if text.split() != PROMPT_TEXT.split():
        raise Failure(f"fixture: echo streamed {text!r}, expected {PROMPT_TEXT!r}")
    log(f"fixture: OK: {len(frames)} valid JSON-RPC lines; initialize, session/new, prompt")


class AgentProcess:
    """A long-lived acp-server in a container, driven over its stdin and stdout."""

    def __init__(self, proc: subprocess.Popen[str], term: Callable[[], None] | None = None):
        self.proc = proc
        self.term = term
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.next_id = 1
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def request(
        self, method: str, params: JsonObject, timeout: float = HANG_GUARD_S
    ) -> tuple[JsonObject, list[JsonObject]]:
        """Send a request; return its result and the frames that came before the answer."""
        request_id, self.next_id = self.next_id, self.next_id + 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        seen: list[JsonObject] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise Failure(f"no answer to {method} in {timeout} s") from None
            if line is None:
                raise Failure(f"acp-server exited before answering {method}")
            (frame,) = parse_frames(line)
            if frame.get("id") == request_id and "method" not in frame:
                if "error" in frame:
                    raise Failure(f"{method} failed: {frame['error']}")
                return frame["result"], seen
            if "method" in frame and "id" in frame:
                raise Failure(f"unexpected request from the agent: {frame}")
            seen.append(frame)

    def session(self, cwd: str) -> str:
        self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        return str(self.request("session/new", {"cwd": cwd, "mcpServers": []})[0]["sessionId"])

    def prompt(self, session_id: str, text: str) -> list[JsonObject]:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        result, frames = self.request("session/prompt", params)
        if result.get("stopReason") != "end_turn":
            raise Failure(f"prompt answered {result}, expected end_turn")
        return frames

    def close_stdin(self, timeout: float = HANG_GUARD_S) -> int:
        """EOF, as an editor that closes the pipe; return the exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"acp-server did not exit within {timeout} s of EOF") from None

    def kill(self) -> None:
        """Kill it if it still runs, then close our ends of its pipes (once the reader has
        seen their end)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(HANG_GUARD_S)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()


def tool_outputs(frames: list[JsonObject]) -> list[str]:
    """The text output of every completed or failed tool call, in order."""
    outputs = []
    for frame in frames:
        update = frame.get("params", {}).get("update", {})
        if update.get("sessionUpdate") == "tool_call_update" and update.get("status") in (
            "completed",
            "failed",
        ):
            texts = []
            for item in update.get("content") or []:
                content = item.get("content") if isinstance(item, dict) else None
                if isinstance(content, dict) and content.get("type") == "text":
                    texts.append(content["text"])
            outputs.append("\n".join(texts) or json.dumps(update.get("rawOutput")))
    return outputs


def check_workspace(engine: Engine) -> str:
    """The editor command: the workspace mounted at its own path, the host user's uid; the
    agent reads a host file and writes one that the host user owns."""
    workspace = os.path.realpath(tempfile.mkdtemp(prefix="acp-smoke-ws-"))
    try:
        # As root, play a typical desktop user (files of uid 0 prove nothing about --user).
        uid, gid = (1000, 1000) if os.geteuid() == 0 else (os.getuid(), os.getgid())
        Path(workspace, "input.txt").write_text("from the host\n")
        model = {
            "responses": [
                [{"tool_call": {"name": "read_file", "arguments": {"path": "input.txt"}}}],
                [{"tool_call": {"name": "write_file", "arguments": WORKSPACE_WRITE}}],
                [{"text": "done"}],
            ]
        }
        Path(workspace, ".smoke-model.json").write_text(json.dumps(model))
        for path in Path(workspace).iterdir():
            os.chown(path, uid, gid)
        os.chown(workspace, uid, gid)
        os.chmod(workspace, 0o755)
        model_spec = f"script:{workspace}/.smoke-model.json"
        agent = engine.spawn(
            ["--model", model_spec, "--mode", "accept_edits"], workspace, f"{uid}:{gid}"
        )
        try:
            session_id = agent.session(workspace)
            outputs = tool_outputs(agent.prompt(session_id, "read input.txt, write hello.txt"))
            status = agent.close_stdin()
        finally:
            agent.kill()
        if status != 0:
            raise Failure(f"workspace: acp-server exited with status {status} after EOF")
        if len(outputs) != 2 or "from the host" not in outputs[0]:
            raise Failure(f"workspace: read_file of a host file gave {outputs}")
        written = Path(workspace, WORKSPACE_WRITE["path"])
        if not written.is_file() or written.read_text() != WORKSPACE_WRITE["content"]:
            raise Failure(f"workspace: {written} missing or wrong after write_file: {outputs}")
        owner = (written.stat().st_uid, written.stat().st_gid)
        if owner != (uid, gid):
            raise Failure(f"workspace: {written} belongs to {owner}, expected {(uid, gid)}")
        summary = f"read a host file, wrote {written} as {uid}:{gid}, exit 0 at EOF"
        log(f"workspace: OK: {summary}")
        return summary
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def check_tour(engine: Engine) -> str | None:
    """The tour fixture, played by the fixture runner on the host against acp-server in the
    container (`--server`), must match its golden transcript."""
    fixture = ROOT / "examples" / "tour" / "tour.jsonl"
    runner = ROOT / "acp_fixture"
    if not fixture.exists() or not runner.is_dir():
        log("tour: skipped (no examples/tour/tour.jsonl or acp_fixture/ in this checkout)")
        return None
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="acp-smoke-tour-"))
    try:
        # The runner makes the workspace and data directory under --tmp-dir and starts the
        # server in the fixture's directory (the scripted model's path is relative to it): both
        # are mounted at their own paths, and the server runs as us, like an editor's agent.
        fixture_dir = str(fixture.parent)
        user = f"{os.getuid()}:{os.getgid()}"
        server = engine.server_command([tmp, f"{fixture_dir}:ro"], fixture_dir, user)
        argv = [sys.executable, "-m", "acp_fixture", "run", str(fixture.relative_to(ROOT))]
        argv += ["--tmp-dir", tmp, "--server", shlex.join(server)]
        result = sh(argv, cwd=ROOT, capture_output=True)
        print(result.stdout, end="", file=sys.stderr)
        summary = result.stdout.strip().splitlines()[-1]
        log(f"tour: {summary}")
        return summary
    except subprocess.CalledProcessError as exc:
        output = (exc.stdout or "") + (exc.stderr or "")
        tail = "\n".join(output.strip().splitlines()[-40:])
        raise Failure(f"tour: the fixture runner exited with {exc.returncode}:\n{tail}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_pid1(engine: Engine) -> str | None:
    files = {"model.json": json.dumps(PID1_MODEL)}
    args = ["--model", "script:/smoke/model.json", "--mode", "bypass", "--log-level", "info"]
    agent = engine.start_pid1(args, files)
    if agent is None:
        return None
    try:
        session_id = agent.session("/tmp")
        outputs = tool_outputs(agent.prompt(session_id, "make orphans"))
        if len(outputs) != 4:
            raise Failure(f"pid1: expected 4 tool outputs, got {outputs}")
        for number, output in enumerate(outputs, 1):
            for line in output.splitlines():
                log(f"  tool {number}: {line}")
        if "ppid=1" not in outputs[0].split():
            raise Failure(f"pid1: the tool's parent is not PID 1: {outputs[0]!r}")
        if "zombies=0 sleeps=0" not in outputs[1]:
            raise Failure("pid1: the orphan of the first tool call was not killed and reaped")
        counts = [line for line in outputs[3].splitlines() if line.startswith("zombies=")]
        escapee = counts[0] if counts else "?"
        log(
            f"pid1: after a `setsid` escapee exited: {escapee} (informational: the agent "
            "reaps only its tools' process groups; see docs/docker.md)"
        )
        assert agent.term is not None
        agent.term()
        try:
            status = agent.proc.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            raise Failure(f"pid1: PID 1 did not exit within {HANG_GUARD_S} s of SIGTERM") from None
        if status != 0:
            raise Failure(f"pid1: PID 1 exited with status {status} after SIGTERM")
        summary = (
            f"tools ran under PID 1 acp-server, their group's orphan was reaped, "
            f"SIGTERM -> exit 0; setsid escapee afterwards: {escapee}"
        )
        log(f"pid1: OK: {summary}")
        return summary
    finally:
        agent.kill()
