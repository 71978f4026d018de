"""Run one built-in search tool once, from a given source tree, and print what it cost.

Usage: `python benchmarks/programs/search_tool.py SOURCE_TREE WORKSPACE TOOL ARGS_JSON`.
SOURCE_TREE is a checkout of acp-server (this one, or a worktree of an older commit): its
`acp_server` package is imported instead of the installed one, so two implementations of a
tool run side by side on the same interpreter and libraries. The tool is bound to WORKSPACE
as a session binds it (`builtin_tools`), called once with ARGS_JSON, and one JSON line is
printed: the call's wall time, the process's peak RSS (VmHWM) before and after the call,
the largest peak RSS of a child it waited for (`rg`: RUSAGE_CHILDREN), and the output's first
and last lines. `benchmarks search` uses it, one fresh process per sample.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def vm_hwm_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    tree, workspace, tool_name, arguments = sys.argv[1:]
    sys.path.insert(0, tree)
    import anyio

    import acp_server
    from acp_server.cancellation import TurnCancellation
    from acp_server.tools.builtin import builtin_tools
    from acp_server.tools.local_commands import LocalCommands
    from acp_server.tools.local_files import LocalFiles
    from acp_server.tools.workspace import PathRoots

    loaded_from = str(Path(acp_server.__file__).resolve().parent.parent)
    tools = {t.name: t for t in builtin_tools(PathRoots(workspace), LocalFiles(), LocalCommands())}
    tool = tools[tool_name]
    before = vm_hwm_mib()

    class Unwatched:
        """The tool call served: nobody shows its progress here."""

        call_id = "call_bench"

        async def progress(self, text: str) -> None:
            return None

        async def terminal(self, terminal_id: str) -> None:
            return None

    async def call() -> tuple[float, str, bool]:
        started = time.perf_counter()
        output = await tool.run(json.loads(arguments), Unwatched(), TurnCancellation().signal)
        return time.perf_counter() - started, output.text, output.failed

    seconds, text, failed = anyio.run(call)
    lines = text.splitlines() or [""]
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    result = {
        "seconds": seconds,
        "hwm_before_mib": before,
        "hwm_after_mib": vm_hwm_mib(),
        "child_peak_mib": children,
        "failed": failed,
        "first_line": lines[0][:200],
        "last_line": lines[-1][:200],
        "loaded_from": loaded_from,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
