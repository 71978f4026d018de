"""A cancel while acp-server streams text: the sample of `cancel`, and the context series of
`tool-cancel` (the cost of a cancel with no process to stop)."""

from __future__ import annotations

from benchmarks.client import AgentProcess, text_prompt
from benchmarks.measure import Result

# what acp-server streams until cancelled, and how many updates to await first.
CANCEL_SCRIPT = {"responses": [[{"text": "tick ", "repeat": 1_000_000, "delay_ms": 1}]]}
CANCEL_AFTER_UPDATES = 3


def cancel_sample(agent: AgentProcess, session_id: str) -> Result:
    """Prompt, await CANCEL_AFTER_UPDATES chunks of it, cancel; time cancel write -> the turn's
    end (v1: the prompt's response; v2: the `idle` state)."""
    first_chunks = agent.chunks + CANCEL_AFTER_UPDATES
    request_id, _ = agent.request("session/prompt", text_prompt(session_id, "go"))
    agent.wait_chunks(first_chunks)
    t_cancel = agent.notify("session/cancel", {"sessionId": session_id})
    chunks_at_cancel = agent.chunks
    t_end, stop_reason = agent.turn_end(request_id, session_id)
    return {
        "ms": (t_end - t_cancel) * 1000,
        "stop_reason": stop_reason,
        "chunks_after_cancel": agent.chunks - chunks_at_cancel,
    }
