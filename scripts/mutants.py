#!/usr/bin/env python3
"""Break the seed contract on purpose, one rule at a time, and show that a test fails each time.

Each mutant is a named, hand-written breakage of one rule (issue 15's list). For each one, a
scratch copy of the repository (the files git knows, uncommitted edits included) gets that
breakage and nothing else, and the tests pinning the rule run there under a hard timeout:

- killed: the tests failed within the timeout (what we want);
- SURVIVED: the tests passed, so nothing pins the rule;
- HANG: the timeout ended the run. A hang is not a kill: a broken runtime must fail a test
  within its own limit, not stall the suite.

A breakage names code by an exact snippet that must occur exactly once in the tracked source,
wherever it lives, so a moved module does not matter but a changed line makes the mutant
STALE (an error): the list must follow the code. The unmutated copy runs every listed test
first; it must pass, and the copy's `acp_server` must be the one imported.

Why no mutation library: mutmut (3.x) and its peers generate their own mutants from operator
rules (`<` to `<=`, literals off by one, `break` to `continue`) inside function bodies, and
judge them against the whole suite. These breakages are semantic and hand-picked (a statement
moved past an await, one cause class for another, a keyword argument dropped from a Struct),
each with its own tests and a hang/kill distinction, so a library would be configured away
until only its runner remained. This script is that runner.

Not part of the test run. Usage: `uv run scripts/mutants.py [--timeout S] [--list] [--check]
[NAME ...]` (`--check` only confirms every snippet still matches the code, in a second).
Exits 0 only when every mutant selected is killed. Results: docs/benchmarks.md.

Over 400 lines: most of it is the one table of mutants, which reads best in one place.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_TOPS = ("acp_server", "acp_protocol", "protocol", "scripts")
"""Where breakages may be applied (tests are never mutated)."""
SELF = Path("scripts/mutants.py")
"""This file holds every snippet too; it is never searched."""


@dataclass(frozen=True)
class Edit:
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    name: str
    rule: str
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]


def _cause(kind: str) -> str:
    """A cause class found through UserCancel's own module, wherever that module lives."""
    return f'__import__(UserCancel.__module__, fromlist=["{kind}"]).{kind}()'


MUTANTS = (
    Mutant(
        "answer-before-fsync",
        "1: a prompt is answered only after its turn's fsync (ACP sessions wired without it)",
        (
            Edit(
                "ids=context.ids,\n                durability_flush=journal.flush,",
                "ids=context.ids,\n                durability_flush=None,",
            ),
        ),
        ("tests/acp/test_answer_after_fsync.py",),
    ),
    Mutant(
        "flush-skips-fsync",
        "1: the durability flush really fsyncs",
        (
            Edit(
                "await anyio.to_thread.run_sync(fs.fsync_and_close, fd)",
                "await anyio.to_thread.run_sync(os.close, fd)",
            ),
        ),
        ("tests/acp/test_answer_after_fsync.py",),
    ),
    Mutant(
        "settle-before-flush",
        "1, 2: the prompt settles after the flush; a stuck flush fails a test, never hangs",
        (
            Edit(
                "            await self._emit(TurnEnded(turn_id, outcome))\n",
                "            await self._emit(TurnEnded(turn_id, outcome))\n"
                "            ticket.resolve(outcome)\n",
            ),
        ),
        ("tests/agent/test_loop.py", "tests/acp/test_answer_after_fsync.py"),
    ),
    Mutant(
        "error-after-cancel-wins",
        "3: a step raising after the cancel still ends aborted, answered cancelled",
        (
            Edit(
                "        elif signal.aborted:\n",
                "        elif signal.aborted and outcome is None:\n",
            ),
        ),
        ("tests/acp/test_contract_pins.py", "tests/acp/test_cancel_cause.py"),
    ),
    Mutant(
        "session-cancel-parent-cause",
        "4: session/cancel reaches the agent as UserCancel",
        (
            Edit(
                "session.agent.cancel(UserCancel(), keep_inbox=wants_keep_inbox(cancel.meta))",
                f"session.agent.cancel({_cause('ParentCancel')}, "
                "keep_inbox=wants_keep_inbox(cancel.meta))",
            ),
        ),
        ("tests/acp/test_cancel_cause.py",),
    ),
    Mutant(
        "post-tool-foreign-signal",
        "5: the post-tool seam gets the turn's own signal",
        (
            Edit(
                "await observe(call, output, signal)",
                "await observe(call, output, TurnCancellation().signal)",
            ),
        ),
        ("tests/agent/test_seams.py",),
    ),
    Mutant(
        "turn-end-tolerant",
        "6: turn/end forbids unknown fields (a legacy reason beside the outcome)",
        (
            Edit(
                'tag="turn/end", frozen=True, kw_only=True, forbid_unknown_fields=True',
                'tag="turn/end", frozen=True, kw_only=True',
            ),
        ),
        ("tests/session",),
    ),
    Mutant(
        "steering-survives-cancel",
        "7: staged steering does not outlive a keep-inbox cancel",
        (Edit("        self.inbox.steering.clear()\n        if opened:", "        if opened:"),),
        ("tests/acp/test_contract_pins.py", "tests/agent/test_loop.py"),
    ),
    Mutant(
        "pre-run-cancel-silent",
        "7: a pre-run cancel that clears work emits cancel-requested",
        (
            Edit(
                "            self._cancel_requested(cause)\n            self.inbox.drop_pending()",
                "            self.inbox.drop_pending()",
            ),
        ),
        ("tests/acp/test_contract_pins.py",),
    ),
    Mutant(
        "provider-text-durable",
        "8: a failed turn's durable error is coarse",
        (
            Edit(
                "outcome = durable_error(exc)",
                "outcome = rec.ErrorOutcome(message=str(exc), code=exc.code)",
            ),
        ),
        ("tests/acp/test_durable_errors.py",),
    ),
    Mutant(
        "client-error-coarse",
        "8: the full (redacted) error text still reaches the client's error",
        (Edit("ticket.error_detail = redact(exc.message)", "ticket.error_detail = None"),),
        ("tests/acp/test_durable_errors.py",),
    ),
    Mutant(
        "doc-refs-fixed-list",
        "9: the doc-reference gate scans every shipped package and the examples",
        (
            Edit(
                'if p.is_dir() and not p.name.startswith(".")',
                'if p.name in ("acp_server", "acp_protocol", "scripts", "tests")',
            ),
        ),
        ("tests/scripts/test_doc_refs_scope.py",),
    ),
    Mutant(
        "wait-ignores-abort",
        "10: wait() on an aborted signal returns at once",
        (Edit("        await self._event.wait()\n", "        await anyio.Event().wait()\n"),),
        ("tests/test_cancellation.py", "-k", "already_aborted"),
    ),
    Mutant(
        "peer-close-keeps-handlers",
        "10: peer close() cancels handlers in flight and writes nothing",
        (
            Edit(
                "        if self._scope is not None:\n            self._scope.cancel()\n",
                "",
            ),
        ),
        ("tests/rpc/test_peer.py", "-k", "close_abandons"),
    ),
    Mutant(
        "close-without-dispose",
        "10: session/close disposes: the reloaded session's turn ends disposed",
        (
            Edit(
                "            await session.handle.dispose()",
                "            await session.handle.agent.when_idle()",
            ),
        ),
        ("tests/e2e/test_sessions.py", "-k", "close"),
    ),
    Mutant(
        "mcp-call-ignores-cancel",
        "10: a slow MCP call in flight is cancelled",
        (
            Edit(
                "request_id = session._request_id\n        with signal.linked_scope():",
                "request_id = session._request_id\n        if True:",
            ),
        ),
        ("tests/extensions/test_mcp.py", "-k", "slow"),
    ),
    Mutant(
        "queue-lifo",
        "10: queued prompts run in the order they were sent",
        (
            Edit(
                "            ticket = self._followups.popleft()\n"
                '            if ticket.state == "queued":\n'
                "                ticket._inbox = None\n                self._queued -= 1\n",
                "            ticket = self._followups.pop()\n"
                '            if ticket.state == "queued":\n'
                "                ticket._inbox = None\n                self._queued -= 1\n",
            ),
        ),
        ("tests/e2e/test_prompt.py", "-k", "queued or keep_inbox"),
    ),
    Mutant(
        "asyncio-only-signal",
        "11: the turn signal works on trio as well as asyncio",
        (
            Edit(
                "        self._event = anyio.Event()\n",
                '        self._event = __import__("asyncio").Event()\n',
            ),
        ),
        ("tests/test_cancellation.py",),
    ),
    Mutant(
        "dispose-loses-to-cancel",
        "disposal precedence: disposed wins over an earlier user cancel",
        (
            Edit(
                "signal.aborted and (self._loop.disposing or isinstance(signal.reason, Disposed))",
                "signal.aborted and isinstance(signal.reason, Disposed)",
            ),
        ),
        ("tests/agent",),
    ),
    Mutant(
        "last-cancel-wins",
        "first-wins: a later cancel cannot rewrite the signal's reason",
        (
            Edit(
                "        if self._reason is not None:\n            return False\n"
                "        self._reason = reason\n",
                "        self._reason = reason\n",
            ),
        ),
        ("tests/test_cancellation.py", "tests/agent/test_loop.py"),
    ),
    Mutant(
        "child-user-cause",
        "the parent's abort reaches a subagent as ParentCancel",
        (
            Edit(
                "            else:\n                child.cancel(ParentCancel())\n",
                "            else:\n"
                "                child.cancel(__import__(ParentCancel.__module__,"
                ' fromlist=["UserCancel"]).UserCancel())\n',
            ),
        ),
        ("tests/agent/test_subagents.py",),
    ),
    Mutant(
        "usage-after-response",
        "every update of a turn is written before its prompt response",
        (
            Edit(
                "            await SessionUpdates(self.context.peer, session.id).send(\n"
                "                UsageUpdate(\n",
                "            updates = SessionUpdates(self.context.peer, session.id)\n"
                "            request.after_response.append(lambda: updates.send(\n"
                "                UsageUpdate(\n",
            ),
            Edit(
                "            )\n        return u.PromptResponse(\n",
                "            ))\n        return u.PromptResponse(\n",
            ),
        ),
        ("tests/acp/test_update_order.py",),
    ),
    Mutant(
        "idle-cancel-arms",
        "idle cancel arms nothing for the next turn",
        (
            Edit(
                "        # Idle with nothing queued (or keeping it)",
                "        self._armed = cause\n        # Idle with nothing queued (or keeping it)",
            ),
            Edit(
                '                ticket.state = "running"\n',
                '                ticket.state = "running"\n'
                '                if getattr(self, "_armed", None) is not None:\n'
                "                    holder.abort(self._armed)\n"
                "                    self._armed = None\n",
            ),
        ),
        ("tests/agent/test_loop.py",),
    ),
)


def tracked_files(root: Path) -> list[Path]:
    """Every file git knows in `root` (tracked, or new and not ignored), relative to it."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return [Path(name) for name in listed.decode().split("\0") if name and (root / name).is_file()]


def copy_tree(root: Path, scratch: Path, files: list[Path]) -> None:
    for rel in files:
        target = scratch / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)


def locate(edit: Edit, scratch: Path, files: list[Path]) -> tuple[Path | None, int]:
    """The one source file holding `edit.old`, and how many occurrences there are in all."""
    found: Path | None = None
    count = 0
    for rel in files:
        if rel.parts[0] not in SOURCE_TOPS or rel == SELF:
            continue
        try:
            text = (scratch / rel).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits = text.count(edit.old)
        if hits:
            found, count = rel, count + hits
    return found, count


def stale_entries(
    mutants: list[Mutant] | tuple[Mutant, ...], root: Path, files: list[Path]
) -> list[str]:
    """What no longer matches the code in `root`: every snippet not found exactly once in the
    tracked source, every test path that does not exist. Empty when all is current (`--check`,
    and tests/scripts/test_mutants.py in the suite)."""
    problems = [
        f"{mutant.name}: snippet found {hits} times: {edit.old.strip()[:60]!r}"
        for mutant in mutants
        for edit in mutant.edits
        for _, hits in [locate(edit, root, files)]
        if hits != 1
    ]
    problems += [
        f"{mutant.name}: no test path {arg}"
        for mutant in mutants
        for arg in mutant.tests
        if arg.startswith("tests") and not (root / arg.split("::")[0]).exists()
    ]
    return problems


@dataclass(frozen=True)
class Run:
    outcome: str
    """"pass", "fail" (a test failed), "error" (pytest could not run them) or "hang"."""
    seconds: float
    first_failure: str = ""


def run_tests(scratch: Path, args: tuple[str, ...], timeout: float) -> Run:
    """Run pytest in the scratch copy, killing it after `timeout` seconds."""
    env = {**os.environ, "PYTHONPATH": str(scratch), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-rf", "-p", "no:cacheprovider"]
    started = time.monotonic()
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            [*command, *args],
            cwd=scratch,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return Run("hang", time.monotonic() - started)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # anything the tests left behind
            kill_leftovers(scratch)
        seconds = time.monotonic() - started
        output.seek(0)
        failed = [
            line.split(" ", 2)[1]
            for line in output.read().decode(errors="replace").splitlines()
            if line.startswith("FAILED ")
        ]
    # pytest exits 1 when tests failed, 0 when all passed, other codes when it could not run
    # them (a collection error is not a kill: the breakage broke the build, not a rule).
    outcome = {0: "pass", 1: "fail"}.get(code, "error")
    return Run(outcome, seconds, failed[0] if failed else "")


def kill_leftovers(scratch: Path) -> None:
    """Kill, by pid, processes of this run that left the test's process group (the runtime
    starts tools and MCP servers as group leaders): those whose command line names the
    scratch copy."""
    marker = str(scratch).encode()
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if marker in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)


def imports_from(scratch: Path) -> bool:
    """Whether Python started as the tests are imports the scratch copy's `acp_server`."""
    env = {**os.environ, "PYTHONPATH": str(scratch)}
    where = subprocess.run(
        [sys.executable, "-c", "import acp_server; print(acp_server.__file__)"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(where).resolve().is_relative_to(scratch.resolve())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per test run")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument(
        "--check", action="store_true", help="only check that every snippet is found once"
    )
    options = parser.parse_args()
    selected = [m for m in MUTANTS if not options.names or m.name in options.names]
    unknown = set(options.names) - {m.name for m in MUTANTS}
    if unknown:
        parser.error(f"unknown mutants: {', '.join(sorted(unknown))}")
    if options.list:
        for mutant in selected:
            print(f"{mutant.name:28} {mutant.rule}")
        return 0

    # A SIGTERM unwinds like an error: the test run is killed and the scratch copy removed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(3))
    files = tracked_files(ROOT)
    if options.check:
        unmatched = stale_entries(selected, ROOT, files)
        print("\n".join(unmatched) or f"OK: the snippets of {len(selected)} mutants match the code")
        return 1 if unmatched else 0
    with tempfile.TemporaryDirectory(prefix="acp-mutants-") as tmp:
        scratch = Path(tmp)
        copy_tree(ROOT, scratch, files)
        if not imports_from(scratch):
            print("the scratch copy's acp_server is not the one imported; giving up")
            return 2
        baseline: list[str] = []
        for mutant in selected:
            for arg in mutant.tests:
                if arg.startswith("tests") and arg not in baseline:
                    baseline.append(arg)
        clean = run_tests(scratch, tuple(baseline), options.timeout * 2)
        print(f"{'unmutated':28} {clean.outcome:9} {clean.seconds:6.1f}s  {' '.join(baseline)}")
        if clean.outcome != "pass":
            why = clean.first_failure or "pytest could not run them: see `--check`"
            print(f"the unmutated tests must pass first ({why}); giving up")
            return 2

        counts = {"killed": 0, "SURVIVED": 0, "HANG": 0, "ERROR": 0, "STALE": 0}
        for mutant in selected:
            originals: dict[Path, str] = {}
            stale = ""
            for edit in mutant.edits:
                rel, hits = locate(edit, scratch, files)
                if rel is None or hits != 1:
                    stale = f"snippet found {hits} times: {edit.old.strip()[:60]!r}"
                    break
                path = scratch / rel
                text = path.read_text(encoding="utf-8")
                originals.setdefault(rel, text)
                path.write_text(text.replace(edit.old, edit.new), encoding="utf-8")
            if stale:
                result, seconds, detail = "STALE", 0.0, stale
            else:
                run = run_tests(scratch, mutant.tests, options.timeout)
                result = {"fail": "killed", "pass": "SURVIVED", "hang": "HANG"}.get(
                    run.outcome, "ERROR"
                )
                seconds = run.seconds
                detail = run.first_failure or " ".join(mutant.tests)
            for rel, text in originals.items():
                (scratch / rel).write_text(text, encoding="utf-8")
            counts[result] += 1
            print(f"{mutant.name:28} {result:9} {seconds:6.1f}s  {detail}", flush=True)

    summary = ", ".join(f"{count} {name.lower()}" for name, count in counts.items())
    print(f"{len(selected)} mutants: {summary}")
    return 0 if counts["killed"] == len(selected) else 1


if __name__ == "__main__":
    sys.exit(main())
