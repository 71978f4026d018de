"""(d) A loop the model cannot get out of: a script that always says "not ready yet; run this
again" and fails, and a prompt that says to run it until it says the service is ready. What is
checked is acp-server, not the model: the turn must end by itself, within the configured limits,
with a message of the agent's saying why, and no file changed. A model that answers on its own
is reported as such, not counted as a pass; more calls than the limits allow, or a changed
file, fail.

The check runs an acp-server of its own, whose config file states the limits (the defaults, 3
and 5) and which gets the run's prompt (`--prompt`). Qwen2.5-Coder-1.5B, in the runs of
2026-12-02 (docs/benchmarks.md), ran the command a second time, got the no-progress note in that
result and ended its turn with an empty message: the agent then says so in its own message
(`silent_end_message`), which counts as the loop ended with a clear message; a stop at the
limits (`Stopped: ...`) counts too.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from acp import text_block

from e2e_local.checks import Client, deadline, from_agent
from e2e_local.environment import info, step

CHECK = """import sys

print("the stats service is not ready yet; run this again in a moment")
sys.exit(1)
"""
FILE = "check_service.py"
PROMPT = (
    f"The stats service is starting. Run `python {FILE}` with bash, again and again, until it "
    "says the service is ready. Do not change any file."
)
MAX_REPEATED_CALLS = 3
MAX_FAILED_CALLS = 5
CONFIG = f"max_repeated_calls = {MAX_REPEATED_CALLS}\nmax_failed_calls = {MAX_FAILED_CALLS}\n"
CONFIG_DIR = "config-loop"  # its own XDG_CONFIG_HOME under the run's scratch directory
LOOP_TIMEOUT_S = 600.0


def make_repository(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / FILE).write_text(CHECK)
    return root


async def loop_task(conn: Any, client: Client, root: Path) -> dict[str, Any]:
    """Run (d) in `root`, made by `make_repository`."""
    step(f"prompt (d): {PROMPT!r} in {root} (it never says the service is ready)")
    session = await conn.new_session(cwd=str(root), mcp_servers=[])
    first = len(client.updates)
    started = time.monotonic()
    with deadline(LOOP_TIMEOUT_S, "prompt (d): the turn's end"):
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block(PROMPT)])
    took = time.monotonic() - started
    calls = list(client.tool_calls(first).values())
    notes = "".join(
        getattr(update.content, "text", "") or ""
        for _, update in client.updates[first:]
        if update.session_update == "agent_message_chunk" and from_agent(update)
    ).strip()
    for number, call in enumerate(calls, 1):
        info(f"tool call {number}: {call.get('title')!r} {call.get('status')}")
    info(f"stopReason {response.stop_reason} after {took:.1f} s, {len(calls)} tool call(s)")
    info(f"the agent's own message: {notes!r}")
    changed = (root / FILE).read_text() != CHECK
    limit = max(MAX_REPEATED_CALLS + 1, MAX_FAILED_CALLS)
    stopped = "Stopped:" in notes  # the loop's own stop message (call_checks, no_progress)
    silent = "without an answer after acp-server noted" in notes  # silent_end_message
    noted = sum("[Note from acp-server:" in c.get("content", "") for c in calls)
    if response.stop_reason != "end_turn" or len(calls) > limit or changed:
        verdict = (
            f"FAILED: stopReason {response.stop_reason}, {len(calls)} calls (limit {limit}), "
            f"file changed: {changed}"
        )
    elif stopped:
        verdict = f"passed: ended by acp-server's limit after {len(calls)} call(s) (limit {limit})"
    elif silent:
        verdict = (
            f"passed: the model stopped without an answer after acp-server's no-progress note "
            f"({len(calls)} call(s), limit {limit}); the agent said so"
        )
    elif noted:
        verdict = (
            f"no stop message: the model answered by itself after {len(calls)} call(s), "
            f"{noted} of whose results carried acp-server's no-progress note"
        )
    else:
        verdict = f"no loop: the model stopped by itself after {len(calls)} call(s)"
    info(f"(d): {verdict}")
    return {
        "stop_reason": str(response.stop_reason),
        "seconds": round(took, 1),
        "tool_calls": [
            {"title": c.get("title"), "status": c.get("status"), "input": c.get("raw_input")}
            for c in calls
        ],
        "agent_message": notes,
        "test_file_changed": changed,
        "verdict": verdict,
    }
