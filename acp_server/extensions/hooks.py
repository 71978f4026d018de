"""User hooks: shell commands run at four seams of a turn, configured in `hooks.json` files.

Where hooks come from (read once, when the session starts):

- `$XDG_CONFIG_HOME/acp-server/hooks.json` (default `~/.config/acp-server/hooks.json`): the
  user's own hooks; they always run.
- `<cwd>/.acp-server/hooks.json`: the workspace's hooks. A repository can carry a hostile hooks
  file, so these run only after the user allowed them: before the first workspace hook runs,
  `WorkspaceHookConsent` asks (the ACP bridge sends a permission request). The consent holds
  for the content it was given for (`acp_server.extensions.hook_content`): when the hooks file
  or a file a hook command names (`./lint.sh`) changed since, the user is asked again, naming
  what changed, before the next workspace hook runs. Any answer but allow (once or always)
  skips the workspace hooks for the rest of the session. A user hook never asks, unless a file
  its command names (a workspace script) changed since the session started: then it asks the
  same way, and a refusal skips the user hooks for the rest of the session.

The format::

    {"hooks": {
        "prompt_submit": [{"command": "...", "timeout_ms": 10000}],
        "pre_tool": [{"command": "...", "tools": ["bash"]}],
        "post_tool": [...],
        "stop": [...]}}

`timeout_ms` defaults to 30 s; `tools` (tool events only) restricts a hook to those tools. The
shape is the `HooksFile` Struct, decoded strictly by msgspec: a file that is not valid JSON or
does not have this shape (an unknown key or event included) is reported on stderr, with the path
of the field at fault (`$.hooks.stop[0].timeout_ms`), and ignored as a whole.

How a hook runs: `sh -c COMMAND` through the process runner, in the session's cwd, with a JSON
payload on stdin (`event`, `session_id`, `cwd` and the event's fields) and the turn signal, in
the agent's environment without the provider keys (the process registry's). Cancelling the
turn kills and reaps the hook's process tree; the listener then raises
`TurnAborted`. What a hook may answer on stdout (JSON; empty output means "no opinion"):

- `prompt_submit`: `{"decision": "block", "reason": "..."}` blocks the prompt (no turn opens;
  the client is told which hook blocked it and the prompt answers `refusal`);
  `{"context": "..."}` adds a context message to the turn.
- `pre_tool`: `{"decision": "deny", "reason": "..."}` denies the tool call (the tool fails with
  the reason and the turn goes on).
- `post_tool`: observes the tool's output (in the payload); `{"context": "..."}` injects that
  text as context for the model's next request (`Agent.inject`: it never starts a step).
- `stop`: `{"decision": "continue", "reason": "..."}` asks for one more step with the reason as
  steering. At most once per turn: a stop hook that always answers `continue` would otherwise
  keep the turn going forever. The payload's `continued` says whether this turn already had
  its extra step; a later `continue` in the same turn is reported and ignored.

A hook that exits non-zero, times out, cannot be started, or prints something that is not a
JSON object is reported on stderr (which hook, which event, why) and treated as having no
opinion: a failing hook never blocks anything and never crashes the turn.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from acp_server.agent import Agent, PromptSubmission, TurnProgress
from acp_server.cancellation import TurnAborted, TurnSignal
from acp_server.models.base import ToolCallRequest
from acp_server.paths import config_dir
from acp_server.process import ProcessRegistry, run_process
from acp_server.session import records as rec
from acp_server.tools.base import ToolOutput
from acp_server.tools.local_files import read_small_file
from acp_server.tools.workspace import PathRefused
from acp_server.verdicts import Block, Deny

from .hook_content import changed, fingerprint

log = logging.getLogger(__name__)

HookEvent = Literal["prompt_submit", "pre_tool", "post_tool", "stop"]
Source = Literal["user", "workspace"]

DEFAULT_TIMEOUT_MS = 30_000
HOOKS_FILE_LIMIT = 1 << 20
"""Bytes a hooks file may hold (more is refused, as an invalid file is)."""
WORKSPACE_FILE = Path(".acp-server") / "hooks.json"

Notify = Callable[[str], Awaitable[None]]
"""Shows the user a message (the ACP bridge sends an agent message chunk)."""

WorkspaceHookConsent = Callable[[str, TurnSignal, Sequence[str]], Awaitable[bool]]
"""Asks the user whether the hooks of the workspace file at this path may run; the third
argument names the files that changed since the user last allowed them (empty the first time)."""


@dataclass(frozen=True)
class Hook:
    """One configured hook."""

    event: HookEvent
    command: str
    timeout_ms: int
    source: Source
    path: str
    tools: frozenset[str] | None = None

    def describe(self) -> str:
        """How reports name this hook: its source, event and command."""
        command = self.command if len(self.command) <= 80 else self.command[:79] + "\u2026"
        return f"{self.source} {self.event} hook {command!r} ({self.path})"

    def applies_to(self, tool_name: str) -> bool:
        return self.tools is None or tool_name in self.tools


def user_hooks_path(environ: Mapping[str, str] = os.environ) -> Path:
    """`hooks.json` in the user's config dir (`acp_server.paths.config_dir`)."""
    return config_dir(environ) / "hooks.json"


def workspace_hooks_path(cwd: str) -> Path:
    """`<cwd>/.acp-server/hooks.json`."""
    return Path(cwd) / WORKSPACE_FILE


class HookEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One entry of a hooks file's event list."""

    command: str
    timeout_ms: Annotated[int, msgspec.Meta(gt=0)] = DEFAULT_TIMEOUT_MS

    def __post_init__(self) -> None:
        # Raised here, msgspec reports it with the entry's path (`$.hooks.stop[0]`).
        if not self.command.strip():
            raise ValueError("`command` is empty")


class ToolHookEntry(HookEntry, frozen=True, forbid_unknown_fields=True):
    """An entry of a tool event (`pre_tool`, `post_tool`): it may name the tools it is for."""

    tools: list[str] | msgspec.UnsetType = msgspec.UNSET
    """Unset: every tool."""


class HookLists(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The `hooks` object: a list per event (an unknown event is an unknown field)."""

    prompt_submit: list[HookEntry] = []
    pre_tool: list[ToolHookEntry] = []
    post_tool: list[ToolHookEntry] = []
    stop: list[HookEntry] = []


class HooksFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A whole hooks file. Decoded strictly: a wrong type, an unknown key or event, `tools` on
    an event that is not a tool's, is an error naming its path (`$.hooks.stop[0].tools`)."""

    hooks: HookLists


_HOOKS_FILE = msgspec.json.Decoder(HooksFile)


def parse_hooks(text: str | bytes, source: Source, path: str) -> list[Hook]:
    """The hooks a hooks file declares, event by event in the order of `HookEvent`.

    Raises msgspec.ValidationError (its message names the field's path) for a wrong shape,
    and msgspec.DecodeError for text that is not JSON.
    """
    lists = _HOOKS_FILE.decode(text).hooks
    per_event: tuple[tuple[HookEvent, Sequence[HookEntry]], ...] = (
        ("prompt_submit", lists.prompt_submit),
        ("pre_tool", lists.pre_tool),
        ("post_tool", lists.post_tool),
        ("stop", lists.stop),
    )
    return [
        Hook(event, entry.command, entry.timeout_ms, source, path, _tools_of(entry))
        for event, entries in per_event
        for entry in entries
    ]


def _tools_of(entry: HookEntry) -> frozenset[str] | None:
    if isinstance(entry, ToolHookEntry) and not isinstance(entry.tools, msgspec.UnsetType):
        return frozenset(entry.tools)
    return None


def load_hooks_file(path: Path, source: Source) -> list[Hook]:
    """The hooks of one file: none if it does not exist; none (reported) if it is invalid."""
    try:
        # A repository's hooks file may be a FIFO or /dev/zero: read it without blocking,
        # and only so much of it.
        text = read_small_file(str(path), HOOKS_FILE_LIMIT).decode("utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, PathRefused) as exc:
        log.error("ignoring the %s hooks file %s: cannot read it: %s", source, path, exc)
        return []
    try:
        return parse_hooks(text, source, str(path))
    except msgspec.ValidationError as exc:
        log.error("ignoring the %s hooks file %s: %s", source, path, exc)
    except msgspec.DecodeError as exc:
        log.error("ignoring the %s hooks file %s: invalid JSON: %s", source, path, exc)
    return []


def load_hooks(cwd: str, environ: Mapping[str, str] = os.environ) -> list[Hook]:
    """The user's hooks, then the workspace's (the same file counts once, as the user's)."""
    user = user_hooks_path(environ)
    workspace = workspace_hooks_path(cwd)
    hooks = load_hooks_file(user, "user")
    if not _same_file(user, workspace):
        hooks += load_hooks_file(workspace, "workspace")
    return hooks


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


class SessionHooks:
    """One session's hooks and the seam listeners that run them.

    `install(agent)` adds the listeners to the agent's seams; `pre_tool` goes first in the
    approval list, so a hook's denial comes before any permission question.
    """

    def __init__(
        self,
        hooks: Sequence[Hook],
        *,
        session_id: str,
        cwd: str,
        consent: WorkspaceHookConsent | None = None,
        notify: Notify | None = None,
        processes: ProcessRegistry | None = None,
        env: Mapping[str, str] | None = None,
        grace: float = 2.0,
    ) -> None:
        self.hooks = list(hooks)
        self.session_id = session_id
        self.cwd = cwd
        self._consent = consent
        self._notify = notify
        self._processes = processes
        self._env = env
        self._grace = grace
        self._steer: Callable[[list[rec.Part]], None] | None = None
        self._inject: Callable[[list[rec.Part]], None] | None = None
        self.workspace_allowed: bool | None = None
        """None until asked; then the user's answer, for as long as the content it was given
        for stays the same (a refusal holds for the rest of the session)."""
        self._allowed_content: dict[str, str] = {}
        self.user_allowed = True
        """False once the user refused to run user hooks whose named files changed."""
        self._user_content = self._content("user")
        """User hooks run without a question, as the files they name were when the session
        started; a change since (a sandboxed command rewrote a workspace script) asks."""
        self._continued_turn: str | None = None

    def install(self, agent: Agent) -> None:
        """Add this session's listeners to `agent`'s seams (only for events that have hooks)."""
        self._steer = agent.steer
        self._inject = agent.inject
        events = {hook.event for hook in self.hooks}
        seams = agent.seams
        if "prompt_submit" in events:
            seams.prompt_submit.append(self.prompt_submit)
        if "pre_tool" in events:
            seams.approval.insert(0, self.pre_tool)
        if "post_tool" in events:
            seams.post_tool.append(self.post_tool)
        if "stop" in events:
            seams.turn_stop.append(self.turn_stop)

    # -- the seam listeners ----------------------------------------------------------------

    async def prompt_submit(self, submission: PromptSubmission, signal: TurnSignal) -> Block | None:
        prompt = "\n".join(p.text for p in submission.content if isinstance(p, rec.TextPart))
        for hook, answer in await self._run_event("prompt_submit", {"prompt": prompt}, signal):
            if answer.get("decision") == "block":
                reason = _text(answer.get("reason")) or "no reason given"
                message = f"Prompt blocked by the {hook.describe()}: {reason}"
                await self._tell(message)
                return Block(message)
            context = _text(answer.get("context"))
            if context:
                submission.context.append([rec.TextPart(text=context)])
        return None

    async def pre_tool(self, call: ToolCallRequest, signal: TurnSignal) -> Deny | None:
        payload = _tool_payload(call)
        for hook, answer in await self._run_event("pre_tool", payload, signal, call.name):
            if answer.get("decision") == "deny":
                reason = _text(answer.get("reason")) or "no reason given"
                return Deny(f"{reason} (denied by the {hook.describe()})")
        return None

    async def post_tool(
        self, call: ToolCallRequest, output: ToolOutput, signal: TurnSignal
    ) -> None:
        payload = {**_tool_payload(call), "output": output.text, "failed": output.failed}
        for _, answer in await self._run_event("post_tool", payload, signal, call.name):
            context = _text(answer.get("context"))
            if context and self._inject is not None:
                self._inject([rec.TextPart(text=context)])

    async def turn_stop(self, progress: TurnProgress, signal: TurnSignal) -> None:
        continued = self._continued_turn == progress.turn_id
        payload = {
            "turn_id": progress.turn_id,
            "steps": progress.steps,
            "last_text": progress.last_text,
            "continued": continued,
        }
        for hook, answer in await self._run_event("stop", payload, signal):
            if answer.get("decision") != "continue":
                continue
            reason = _text(answer.get("reason")) or "Continue."
            if continued or self._steer is None:
                log.warning(
                    "ignoring continue from the %s: turn %s already had its extra step",
                    hook.describe(),
                    progress.turn_id,
                )
                continue
            self._continued_turn = progress.turn_id
            continued = True
            self._steer([rec.TextPart(text=reason)])

    # -- running hooks ---------------------------------------------------------------------

    async def _run_event(
        self,
        event: HookEvent,
        fields: Mapping[str, Any],
        signal: TurnSignal,
        tool: str | None = None,
    ) -> list[tuple[Hook, dict[str, Any]]]:
        """Run the event's hooks in order; the answers of those that gave one. A decision
        (block, deny) stops the run: the hooks after it do not run."""
        payload = {"event": event, "session_id": self.session_id, "cwd": self.cwd, **fields}
        answers: list[tuple[Hook, dict[str, Any]]] = []
        for hook in self.hooks:
            if hook.event != event or (tool is not None and not hook.applies_to(tool)):
                continue
            if hook.source == "workspace" and not await self._workspace_allowed(hook, signal):
                continue
            if hook.source == "user" and not await self._user_allowed(hook, signal):
                continue
            answer = await self._run(hook, payload, signal)
            if answer is None:
                continue
            answers.append((hook, answer))
            if answer.get("decision") in ("block", "deny"):
                break
        return answers

    async def _workspace_allowed(self, hook: Hook, signal: TurnSignal) -> bool:
        if self.workspace_allowed is False:
            return False
        if self._consent is None:
            log.warning("skipping workspace hooks from %s: nobody can allow them", hook.path)
            self.workspace_allowed = False
            return False
        # A few small reads and digests, on the loop like the hooks file's own reading.
        content = self._workspace_content()
        if self.workspace_allowed and content == self._allowed_content:
            return True
        what = changed(self._allowed_content, content) if self.workspace_allowed else []
        if what:
            log.warning("workspace hooks from %s: changed since allowed: %s", hook.path, what)
        allowed = await self._consent(hook.path, signal, what)
        signal.raise_if_aborted()  # a cancelled question decides nothing
        self.workspace_allowed = allowed
        self._allowed_content = content
        if not allowed:
            log.warning("workspace hooks from %s were not allowed: skipped", hook.path)
        return allowed

    async def _user_allowed(self, hook: Hook, signal: TurnSignal) -> bool:
        if not self.user_allowed:
            return False
        content = self._content("user")
        if content == self._user_content:
            return True
        what = changed(self._user_content, content)
        log.warning("user hooks from %s: named files changed: %s", hook.path, what)
        allowed = False
        if self._consent is not None:
            allowed = await self._consent(hook.path, signal, what)
            signal.raise_if_aborted()  # a cancelled question decides nothing
        self.user_allowed = allowed
        self._user_content = content
        if not allowed:
            log.warning("user hooks from %s were not allowed after a change: skipped", hook.path)
        return allowed

    def _workspace_content(self) -> dict[str, str]:
        """The fingerprint of the workspace hooks: their files and the files they name."""
        workspace = [hook for hook in self.hooks if hook.source == "workspace"]
        files = [hook.path for hook in workspace]
        return fingerprint(files, [hook.command for hook in workspace], self.cwd)

    def _content(self, source: Source) -> dict[str, str]:
        """The fingerprint of the files the hooks of `source` name (not their hooks file)."""
        commands = [hook.command for hook in self.hooks if hook.source == source]
        return fingerprint([], commands, self.cwd)

    async def _run(
        self, hook: Hook, payload: Mapping[str, Any], signal: TurnSignal
    ) -> dict[str, Any] | None:
        """The hook's JSON answer ({} for empty output), or None if it failed (reported)."""
        env = dict(self._base_environment())
        env["ACP_SERVER_HOOK_EVENT"] = hook.event
        env["ACP_SERVER_SESSION_ID"] = self.session_id
        try:
            result = await run_process(
                ["sh", "-c", hook.command],
                signal=signal,
                registry=self._processes,
                cwd=self.cwd,
                env=env,
                stdin_data=json.dumps(payload).encode(),
                timeout=hook.timeout_ms / 1000,
                grace=self._grace,
            )
        except TurnAborted:
            raise
        except Exception as exc:
            log.warning("the %s could not run: %s", hook.describe(), exc)
            return None
        if result.aborted:
            raise TurnAborted(f"{hook.event} hook")  # its process group is already reaped
        signal.raise_if_aborted()
        if result.timed_out:
            log.warning("the %s timed out after %d ms", hook.describe(), hook.timeout_ms)
            return None
        if result.exit_code != 0:
            how = (
                f"exit code {result.exit_code}"
                if result.exit_code is not None
                else f"signal {result.posix_signal}"
            )
            log.warning("the %s failed (%s): %s", hook.describe(), how, _tail(result.stderr))
            return None
        out = result.stdout.strip()
        if not out:
            return {}
        try:
            answer = json.loads(out)
        except json.JSONDecodeError as exc:
            log.warning("the %s printed invalid JSON (%s): %s", hook.describe(), exc, _tail(out))
            return None
        if not isinstance(answer, dict):
            log.warning(
                "the %s printed JSON that is not an object: %s", hook.describe(), _tail(out)
            )
            return None
        return answer

    def _base_environment(self) -> Mapping[str, str]:
        """The environment given at construction, else the registry's (the server's without
        provider keys), else ours."""
        if self._env is not None:
            return self._env
        if self._processes is not None and self._processes.environment is not None:
            return self._processes.environment
        return os.environ

    async def _tell(self, text: str) -> None:
        if self._notify is None:
            return
        try:
            await self._notify(text)
        except Exception:
            log.exception("telling the user about a hook failed")


def _tool_payload(call: ToolCallRequest) -> dict[str, Any]:
    return {"tool": call.name, "call_id": call.call_id, "arguments": dict(call.arguments)}


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _tail(text: str, limit: int = 500) -> str:
    text = text.strip()
    return text if len(text) <= limit else "\u2026" + text[-limit:]
