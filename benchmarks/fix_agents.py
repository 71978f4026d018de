"""The two kinds of agent the `small-model` mode runs on one fix task, each against the same
model server (through the counting relay, benchmarks/model_relay.py):

- acp-server (this checkout's, or another build's), driven through the official ACP SDK client
  as an editor would: one session in the task's repository, one prompt holding the text and,
  with `attach`, every file of the repository as an embedded resource (what an editor sends
  for an @-mention); permission requests are answered "allow". After the outcome is taken,
  `/rewind 1` must put the code back as it was: the evidence that every edit was journaled
  with its checkpoint.
- aider, with `--yes-always`, the same files added to the chat (`attach`), the same prompt
  (`--message`) and the same test command (`--test-cmd` with `--auto-test`).

The SDK client is used here, not the raw-pipe client of the other modes: a run lasts minutes
of model time, so the client's own overhead does not matter, and its validation checks every
frame acp-server sends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from acp import embedded_text_resource, resource_block, spawn_agent_process, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from benchmarks.fix_tasks import PROMPT, TEST_COMMAND, FixTask
from benchmarks.model_relay import ModelRequest, Relay

MODEL_ALIAS = "qwen"


def tool_path_env() -> dict[str, str]:
    """PATH with this interpreter's directory first: `python -m pytest` then finds pytest
    for the agents' test runs as for the benchmark's own."""
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


@dataclass
class Run:
    """What one run of one agent on one task gave."""

    agent: str
    task: str
    attach: bool
    number: int
    seconds: float = 0.0
    tests_pass: bool = False
    tests_unchanged: bool = True
    tests_summary: str = ""
    requests: list[ModelRequest] = field(default_factory=list)
    stop_reason: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    edits_shown: list[str] = field(default_factory=list)
    """Files a completed `edit` tool call showed a diff of (acp-server)."""
    changed_unshown: list[str] = field(default_factory=list)
    """Files the run changed that no edit tool call showed (acp-server)."""
    rewound: bool | None = None
    """Whether `/rewind 1` put every code file back (acp-server; None: nothing to rewind)."""
    error: str = ""

    @property
    def passed(self) -> bool:
        """The benchmark's verdict: the tests pass and no test file changed."""
        return self.tests_pass and self.tests_unchanged

    def as_json(self) -> dict[str, Any]:
        first = self.requests[0].prompt_tokens if self.requests else None
        return {
            "agent": self.agent,
            "task": self.task,
            "attach": self.attach,
            "run": self.number,
            "passed": self.passed,
            "tests_pass": self.tests_pass,
            "tests_unchanged": self.tests_unchanged,
            "tests_summary": self.tests_summary,
            "seconds": round(self.seconds, 1),
            "model_requests": len(self.requests),
            "first_request_tokens": first,
            "request_tokens": [r.prompt_tokens for r in self.requests],
            "output_tokens": [r.output_tokens for r in self.requests],
            "temperatures": [r.temperature for r in self.requests],
            "stop_reason": self.stop_reason,
            "tool_calls": self.tool_calls,
            "edits_shown": self.edits_shown,
            "changed_unshown": self.changed_unshown,
            "rewound": self.rewound,
            "error": self.error,
        }


class _Client:
    """The editor side: keeps every session update, allows every permission request."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        allowing = [o for o in options if str(o.kind).startswith("allow")]
        if not allowing:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=allowing[0].option_id)
        )

    def tool_calls(self, since: int) -> dict[str, dict[str, Any]]:
        """Each tool call's latest title, kind, status, and the paths of its diffs."""
        calls: dict[str, dict[str, Any]] = {}
        for update in self.updates[since:]:
            if update.session_update not in ("tool_call", "tool_call_update"):
                continue
            call = calls.setdefault(update.tool_call_id, {"diffs": []})
            for name in ("title", "kind", "status"):
                value = getattr(update, name, None)
                if value is not None:
                    call[name] = str(value)
            for item in getattr(update, "content", None) or ():
                if getattr(item, "type", None) == "diff":
                    call["diffs"].append(item.path)
        return calls


def _resources(root: Path, task: FixTask) -> list[Any]:
    """Every file of the task as an embedded resource, as an editor's @-mention sends it."""
    return [
        resource_block(
            embedded_text_resource(
                (root / path).as_uri(), (root / path).read_text(), mime_type="text/x-python"
            )
        )
        for path in task.files
    ]


async def _acp_server_turn(
    exe: Path,
    root: Path,
    task: FixTask,
    relay: Relay,
    run: Run,
    config_home: Path,
    data: Path,
    started: float,
) -> None:
    client = _Client()
    env = {
        **os.environ,
        **tool_path_env(),
        "OPENAI_BASE_URL": relay.base_url,
        "XDG_CONFIG_HOME": str(config_home),  # the run's config file, no user's in the way
    }
    env.pop("OPENAI_API_KEY", None)
    args = ["--model", f"openai:{MODEL_ALIAS}", "--data-dir", str(data)]
    sdk_client: Any = client  # a partial client: only the callbacks acp-server makes here
    async with spawn_agent_process(
        sdk_client, str(exe), *args, env=env, transport_kwargs={"stderr": subprocess.DEVNULL}
    ) as (conn, _process):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(root), mcp_servers=[])
        prompt = [text_block(PROMPT), *(_resources(root, task) if run.attach else [])]
        response = await conn.prompt(session_id=session.session_id, prompt=prompt)
        run.stop_reason = str(response.stop_reason)
        run.seconds = time.monotonic() - started
        run.requests = relay.take()
        changed = await anyio.to_thread.run_sync(_judge, run, task, root, client.tool_calls(0))
        if changed:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("/rewind 1")])
            run.rewound = await anyio.to_thread.run_sync(_restored, task, root)


def _judge(run: Run, task: FixTask, root: Path, calls: dict[str, dict[str, Any]]) -> list[str]:
    """Take the run's outcome and which edits the client was shown; the files it changed."""
    run.tests_pass, run.tests_unchanged, run.tests_summary = task.outcome(root)
    run.tool_calls = [
        {k: call.get(k) for k in ("title", "kind", "status")} for call in calls.values()
    ]
    shown = {
        Path(path).resolve()
        for call in calls.values()
        if call.get("kind") == "edit" and call.get("status") == "completed"
        for path in call["diffs"]
    }
    run.edits_shown = sorted(str(p.relative_to(root.resolve())) for p in shown)
    changed = [p for p in task.files if (root / p).read_text() != task.files[p]]
    run.changed_unshown = [p for p in changed if (root / p).resolve() not in shown]
    return changed


def _restored(task: FixTask, root: Path) -> bool:
    """Whether every file of the task is as it was made."""
    return all((root / p).read_text() == task.files[p] for p in task.files)


def run_acp_server(
    label: str,
    exe: Path,
    task: FixTask,
    root: Path,
    relay: Relay,
    *,
    attach: bool,
    number: int,
    config_home: Path,
    timeout_s: float,
) -> Run:
    """One run of acp-server (`exe`) on `task` in the fresh repository `root`."""
    run = Run(label, task.name, attach, number)
    relay.take()
    data = root.parent / f"{root.name}-data"
    started = time.monotonic()

    async def bounded() -> None:
        with anyio.fail_after(timeout_s):
            await _acp_server_turn(exe, root, task, relay, run, config_home, data, started)

    try:
        anyio.run(bounded)
    except TimeoutError:
        run.error = f"no answer within {timeout_s:.0f} s"
    except Exception as exc:
        run.error = f"{type(exc).__name__}: {exc}"
    if run.error:
        run.seconds = time.monotonic() - started
        run.requests = relay.take()
        run.tests_pass, run.tests_unchanged, run.tests_summary = task.outcome(root)
    return run


def run_aider(
    aider: Path,
    task: FixTask,
    root: Path,
    relay: Relay,
    *,
    attach: bool,
    number: int,
    timeout_s: float,
) -> Run:
    """One run of aider on `task` in the fresh repository `root`: the same prompt, files and
    test command; it answers every question yes and exits after the message."""
    run = Run("aider", task.name, attach, number)
    relay.take()
    env = {
        **os.environ,
        **tool_path_env(),
        "OPENAI_API_BASE": relay.base_url,
        "OPENAI_API_KEY": "none",  # a local server needs none; aider wants one set
    }
    command = [
        str(aider), "--model", f"openai/{MODEL_ALIAS}", "--yes-always",
        "--no-auto-commits", "--no-dirty-commits", "--no-gitignore", "--no-check-update",
        "--no-show-model-warnings", "--no-show-release-notes", "--analytics-disable",
        "--no-pretty", "--test-cmd", TEST_COMMAND, "--auto-test", "--message", PROMPT,
        *(task.files if attach else ()),
    ]  # fmt: skip
    started = time.monotonic()
    process = subprocess.Popen(
        command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        _out, err = process.communicate(timeout=timeout_s)
        run.stop_reason = f"exit {process.returncode}"
        if process.returncode != 0:
            run.error = (err.strip().splitlines() or [""])[-1][:300]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # aider and the test run it started
        process.communicate()
        run.error = f"no exit within {timeout_s:.0f} s"
    run.seconds = time.monotonic() - started
    run.requests = relay.take()
    run.tests_pass, run.tests_unchanged, run.tests_summary = task.outcome(root)
    return run
