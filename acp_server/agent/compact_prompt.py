"""A compact system prompt and tool list for models with a small context window.

With an 8k window, the full system prompt and the nine tool definitions take a large share of
the context (about 2,000 tokens by the budget's estimate; see docs/benchmarks.md), and a small
model follows a few short rules better than many long ones. When the session's window is at
most `COMPACT_WINDOW` tokens, each request gets:

- `COMPACT_SYSTEM_PROMPT` in place of the default prompt (the environment and project
  instructions that follow it are kept; a client's own system prompt is never replaced);
- only `COMPACT_TOOLS` of the built-in tools (MCP tools are kept), each described by one
  sentence (`COMPACT_DESCRIPTIONS`, else the first sentence of its description), with the
  parameters' own descriptions left out.

A call of a tool that was not offered still runs (the loop knows every tool).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from acp_server.models.base import ModelRequest, ToolSpec

from .instructions import DEFAULT_SYSTEM_PROMPT

__all__ = [
    "COMPACT_DESCRIPTIONS",
    "COMPACT_SYSTEM_PROMPT",
    "COMPACT_TOOLS",
    "COMPACT_WINDOW",
    "compact_request",
    "compact_tools",
]

COMPACT_WINDOW = 8192
"""Windows of at most this many tokens get the compact variant."""

COMPACT_SYSTEM_PROMPT = """\
You are a coding agent. You work in the user's workspace with the tools you are given.
- Call read_file on a file before you edit it: never guess what a file holds.
- Fix the cause with a small edit_file change; keep everything else.
- After a change, run the tests with bash and read what they print.
- If a call fails, read the error, change the call and make it again; never repeat it as it was.
- When done, answer in one or two sentences."""

COMPACT_DESCRIPTIONS = {
    "read_file": "Read a text file; its text comes back exactly as it is, without line numbers.",
    "edit_file": (
        "Replace old_text with new_text in a file; old_text must be copied exactly from what "
        "read_file returned."
    ),
}
"""Descriptions written for the compact list; the other tools get their first sentence."""

COMPACT_TOOLS = frozenset({"read_file", "edit_file", "write_file", "list_dir", "grep", "bash"})

_SENTENCE = re.compile(r"(?<=[.!?])\s")


def _first_sentence(text: str) -> str:
    return _SENTENCE.split(text.strip(), maxsplit=1)[0]


def _short_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        return parameters
    short = {
        name: {key: value for key, value in spec.items() if key != "description"}
        if isinstance(spec, dict)
        else spec
        for name, spec in properties.items()
    }
    return {**parameters, "properties": short}


def _short(spec: ToolSpec) -> ToolSpec:
    return ToolSpec(
        name=spec.name,
        description=COMPACT_DESCRIPTIONS.get(spec.name) or _first_sentence(spec.description),
        parameters=_short_parameters(spec.parameters),
    )


def compact_tools(tools: Sequence[ToolSpec], kept: frozenset[str]) -> list[ToolSpec]:
    """The built-in tools named in `kept`, each described by one sentence, and every MCP
    tool as it is."""
    return [
        _short(spec) if spec.name in kept else spec
        for spec in tools
        if spec.name in kept or spec.name.startswith("mcp__")
    ]


def compact_request(request: ModelRequest, base_prompt: str) -> ModelRequest:
    """`request` in its compact variant (see the module docstring); `base_prompt` is the
    agent's configured system prompt, replaced only when it is the default one."""
    system = request.system_prompt
    if base_prompt == DEFAULT_SYSTEM_PROMPT and system.startswith(DEFAULT_SYSTEM_PROMPT):
        system = COMPACT_SYSTEM_PROMPT + system[len(DEFAULT_SYSTEM_PROMPT) :]
    tools = compact_tools(request.tools, COMPACT_TOOLS)
    return msgspec.structs.replace(request, system_prompt=system, tools=tools)
