#!/usr/bin/env python3
"""The size of what every model request carries before the conversation: the system prompt and
the tool definitions, in the full variant and in the compact one (windows of 8k tokens or less;
see acp_server/agent/compact_prompt.py).

Usage: `uv run scripts/prompt_size.py [--tokenize URL]`. Sizes are the context budget's
estimate (UTF-8 bytes / 3, the figure compaction decisions use); with `--tokenize` pointing at a
llama.cpp server (`http://127.0.0.1:PORT`), its `/tokenize` counts the real tokens of the same
text (the system prompt, and the tools as the JSON sent in the request) with the served model's
tokenizer.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import urllib.request
from pathlib import Path

try:
    import msgspec

    from acp_server.agent.compact_prompt import compact_request
    from acp_server.agent.instructions import DEFAULT_SYSTEM_PROMPT
    from acp_server.models.base import ModelRequest, ToolSpec
    from acp_server.models.budget import BYTES_PER_TOKEN
    from acp_server.process.background import BackgroundItems
    from acp_server.tools.builtin import builtin_tools
    from acp_server.tools.local_commands import LocalCommands
    from acp_server.tools.local_files import LocalFiles
    from acp_server.tools.workspace import PathRoots
except ImportError as exc:  # not the project's environment
    sys.exit(f"FAILED: {exc}; run this with `uv run scripts/prompt_size.py`")


def estimate(text: str) -> int:
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def tokens(url: str, text: str) -> int:
    body = json.dumps({"content": text}).encode()
    request = urllib.request.Request(
        url.rstrip("/") + "/tokenize", body, {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return len(json.load(response)["tokens"])


def requests() -> dict[str, ModelRequest]:
    with tempfile.TemporaryDirectory() as root:
        tools = builtin_tools(
            PathRoots(str(Path(root).resolve()), []),
            LocalFiles(),
            LocalCommands(),
            background=BackgroundItems(None, None),  # a session's: bash_output, bash_stop
        )
        specs = [ToolSpec(name=t.name, description=t.description, parameters=dict(t.parameters))
                 for t in tools]  # fmt: skip
    full = ModelRequest(
        session_id="s", system_prompt=DEFAULT_SYSTEM_PROMPT, messages=[], tools=specs
    )
    return {"full": full, "compact (window <= 8192)": compact_request(full, DEFAULT_SYSTEM_PROMPT)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tokenize", help="a llama.cpp server's base URL, for real counts")
    args = parser.parse_args()
    print("| variant | tools | system prompt | tool definitions | total |")
    print("|---|---:|---:|---:|---:|")
    for name, request in requests().items():
        system = request.system_prompt
        tools_json = msgspec.json.encode(
            [{"type": "function", "function": msgspec.to_builtins(t)} for t in request.tools]
        ).decode()
        if args.tokenize:
            sizes = (tokens(args.tokenize, system), tokens(args.tokenize, tools_json))
            unit = "tokens"
        else:
            sizes = (estimate(system), estimate(tools_json))
            unit = "est."
        print(
            f"| {name} | {len(request.tools)} | {sizes[0]} {unit} | {sizes[1]} {unit} | "
            f"{sum(sizes)} {unit} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
