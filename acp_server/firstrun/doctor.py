"""`acp-server doctor`: check what a first prompt needs, one line per check with the fix
(docs/rfc/implemented/feature/2026-12-01-first-run-setup.md).

It takes the server's options (before or after the command) and checks, in order: the config
file parses; a model is configured and answers one tiny request within `MODEL_TIMEOUT`; the
data dir is writable (or can be created) and has room; bubblewrap works, or why sandboxed mode
is off (a warning); the server keeps stdout clean. The report goes to stderr and stdout stays
empty (it is the protocol's in every acp-server process, and a client may run doctor); the
stdout check runs the real server as a child with the same options and reads the child's fd 1,
which must hold JSON-RPC frames and nothing else. The exit status is 1 only when a check
failed that stops a first prompt; warnings leave it 0.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from acp_server.firstrun.config_access import ConfigAccess, Settings

__all__ = ["MODEL_TIMEOUT", "Check", "run_doctor"]

MODEL_TIMEOUT = 30.0
"""Seconds the tiny request may take before the model counts as unreachable."""
SERVER_TIMEOUT = 60.0
"""Seconds the stdout check gives the server to answer and exit."""
MIN_FREE = 16 * 1024 * 1024
"""Below this the data dir has no room for a session's journal: a failure."""
LOW_FREE = 256 * 1024 * 1024
"""Below this, a warning."""

Verdict = Literal["ok", "warn", "FAIL"]
S = TypeVar("S", bound=Settings)


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report."""

    name: str
    verdict: Verdict
    detail: str
    fix: str = ""

    def line(self) -> str:
        fix = f" Fix: {self.fix}" if self.fix and self.verdict != "ok" else ""
        return f"{self.verdict:<4}  {self.name}: {self.detail}{fix}"


def run_doctor(args: argparse.Namespace, default_data_dir: Path, config: ConfigAccess[S]) -> int:
    """Write the report to stderr; 1 when a first prompt would fail, else 0. `config` comes from
    the CLI (the only importer of `acp_server.config`). stdout stays empty: it is the protocol's
    in every acp-server process, and a client may run this command too."""
    from acp_server import redaction
    from acp_server.models.providers import default_key_variables

    redaction.remember(os.environ.get(name) for name in default_key_variables())
    checks: list[Check] = []
    for check in _checks(args, default_data_dir, config):
        checks.append(check)
        print(redaction.redact(check.line()), file=sys.stderr, flush=True)
    failed = [c.name for c in checks if c.verdict == "FAIL"]
    if failed:
        summary = f"\n{len(failed)} problem(s) stop a first prompt: {', '.join(failed)}."
        print(summary, file=sys.stderr)
        return 1
    print("\nReady for a first prompt.", file=sys.stderr)
    return 0


def _checks(
    args: argparse.Namespace, default_data_dir: Path, access: ConfigAccess[S]
) -> Iterator[Check]:
    """The checks in order, each computed when the report reaches it (the lines before a slow
    model check show at once)."""
    config, settings = config_check(access)
    yield config
    yield model_check(args.model, settings, access, config_ok=config.verdict != "FAIL")
    yield data_dir_check(args.data_dir or default_data_dir)
    yield mode_check(args.mode)
    yield sandbox_check()
    yield stdout_check(args)


def config_check(access: ConfigAccess[S]) -> tuple[Check, S]:
    from acp_server import redaction
    from acp_server.models.base import ModelConfigError

    path = access.path
    try:
        settings = access.read(None)
    except ModelConfigError as exc:
        check = Check(
            "config",
            "FAIL",
            str(exc),
            f"correct {path}, or move it away and run `acp-server setup`",
        )
        return check, access.defaults()
    redaction.remember(os.environ.get(name) for name in settings.providers.key_variables())
    redaction.remember(settings.providers.file_keys())
    if settings.path is None:
        detail = f"no config file at {path} (fine when --model or ACP_SERVER_MODEL names a model)"
    else:
        detail = f"{path} parses"
    return Check("config", "ok", detail), settings


def model_check(
    cli_model: str | None, settings: S, access: ConfigAccess[S], *, config_ok: bool
) -> Check:
    from acp_server.firstrun.probe import ProbeFailure, model_answers

    spec = access.choose_model(cli_model, settings)
    if spec is None:
        fix = "run `acp-server setup`, or give --model SPEC or ACP_SERVER_MODEL=SPEC"
        if not config_ok:
            fix = "fix the config file first (above); " + fix
        return Check("model", "FAIL", "no model is configured", fix)
    source = (
        "--model"
        if cli_model
        else access.model_env
        if os.environ.get(access.model_env)
        else "default_model in the config file"
    )
    try:
        answer = model_answers(spec, settings.providers, os.environ, MODEL_TIMEOUT)
    except ProbeFailure as failure:
        message = failure.message
        if failure.kind == "unreachable" and not message.startswith("model unreachable"):
            message = f"model unreachable: {message}"
        fixes = {
            "unreachable": "start the server or correct the base URL (`acp-server setup`)",
            "key": "set a valid key (`acp-server setup`)",
            "model": "choose a model the server has (`acp-server setup`)",
            "other": "see the message; `acp-server setup` writes a working configuration",
        }
        return Check("model", "FAIL", f"{spec} (from {source}): {message}", fixes[failure.kind])
    said = answer.strip().replace("\n", " ")[:60]
    return Check("model", "ok", f"{spec} (from {source}) answered a tiny request: {said!r}")


def data_dir_check(data_dir: Path) -> Check:
    """Writable, or creatable; and room on its file system. Leaves nothing behind."""
    fix = "pass --data-dir DIR on a writable file system with room, or free some space"
    existing = data_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        return Check("data dir", "FAIL", f"{existing} is not a directory", fix)
    created: list[Path] = []
    try:
        missing = data_dir
        while not missing.exists():
            created.append(missing)
            missing = missing.parent
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("data dir", "FAIL", f"{data_dir} is not writable ({exc.strerror})", fix)
    finally:
        for path in created:
            with contextlib.suppress(OSError):
                path.rmdir()
    free = shutil.disk_usage(existing).free
    room = f"{free / 2**30:.1f} GiB free"
    how = "can be created" if created else "is writable"
    if free < MIN_FREE:
        return Check("data dir", "FAIL", f"{data_dir} {how} but has only {room}", fix)
    if free < LOW_FREE:
        return Check("data dir", "warn", f"{data_dir} {how}; only {room}", fix)
    return Check("data dir", "ok", f"{data_dir} {how}; {room}")


def mode_check(mode: str) -> Check:
    from acp_server.tools.permissions import ModeRefused, check_mode

    try:
        check_mode(mode)
    except ModeRefused as exc:
        return Check("mode", "FAIL", str(exc), "choose another --mode")
    return Check("mode", "ok", f"new sessions start in {mode} mode")


def sandbox_check() -> Check:
    import anyio

    from acp_server.process.bubblewrap import BubblewrapProbe

    bwrap, why = anyio.run(BubblewrapProbe().check, None)
    if bwrap is not None:
        return Check("sandbox", "ok", f"bubblewrap works ({bwrap}): sandboxed mode is offered")
    return Check(
        "sandbox",
        "warn",
        f"sandboxed mode is off: {why}",
        "install bubblewrap for the sandboxed mode; every other mode works without it",
    )


def stdout_check(args: argparse.Namespace) -> Check:
    """Run the server with these options; its stdout must be JSON-RPC frames only."""
    import json
    import subprocess

    argv = [sys.executable, "-m", "acp_server", *_server_options(args)]
    with tempfile.TemporaryDirectory(prefix="acp-server-doctor-") as scratch:
        # Its own data dir: the check must not leave a session in the user's.
        argv += ["--data-dir", str(Path(scratch) / "data")]
        frames = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": scratch, "mcpServers": []},
            },
        ]
        try:
            done = subprocess.run(
                argv,
                input="".join(json.dumps(f) + "\n" for f in frames).encode(),
                capture_output=True,
                timeout=SERVER_TIMEOUT,
                cwd=scratch,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Check("stdout", "FAIL", f"the server did not run to the end ({exc})", "")
    fix = "run without the plug-in (hook, MCP server) that writes there, and report it"
    answered: list[object] = []
    for number, raw in enumerate(done.stdout.splitlines(), start=1):
        try:
            frame = json.loads(raw)
        except ValueError:
            shown = raw[:80].decode("utf-8", "replace")
            return Check(
                "stdout", "FAIL", f"line {number} of stdout is not JSON-RPC: {shown!r}", fix
            )
        if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
            return Check("stdout", "FAIL", f"line {number} of stdout is not a JSON-RPC frame", fix)
        if "id" in frame:
            answered.append(frame["id"])
    if done.returncode != 0 or answered[:2] != [0, 1]:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return Check(
            "stdout",
            "FAIL",
            f"the server answered {answered} and exited {done.returncode} ({said[0][:200]})",
            "see the message",
        )
    return Check(
        "stdout", "ok", f"the server wrote only JSON-RPC frames ({len(done.stdout.splitlines())})"
    )


def _server_options(args: argparse.Namespace) -> list[str]:
    """The server options of this command line, except --data-dir (the check uses its own)."""
    options = ["--mode", args.mode, "--log-level", args.log_level]
    options += ["--max-line-bytes", str(args.max_line_bytes)]
    if args.model:
        options += ["--model", args.model]
    if args.deterministic:
        options.append("--deterministic")
    for name in args.pass_env:
        options += ["--pass-env", name]
    return options
