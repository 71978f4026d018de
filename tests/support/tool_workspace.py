"""A temporary workspace with the built-in tools bound to it, as a session binds them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_server.cancellation import TurnCancellation, TurnSignal
from acp_server.tools.base import Tool, ToolOutput
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.workspace import PathRoots
from tests.support.tool_call import a_call

# A small Python file the file and search tools work on.
SOURCE = """def main():
    print("hello")
    return 0


def helper():
    return 0
"""


class Workspace:
    """A workspace directory with a sibling directory outside it, and the tools bound to it."""

    def __init__(self, tmp_path: Path, additional: list[Path] | None = None) -> None:
        self.root = (tmp_path / "ws").resolve()
        self.outside = (tmp_path / "outside").resolve()
        self.root.mkdir(exist_ok=True)
        self.outside.mkdir(exist_ok=True)
        (self.outside / "secret.txt").write_text("top secret\n")
        self.path_roots = PathRoots(str(self.root), [str(d) for d in additional or []])
        self.tools: dict[str, Tool] = {
            tool.name: tool
            for tool in builtin_tools(self.path_roots, LocalFiles(), LocalCommands())
        }

    def file(self, relative: str, content: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        return path

    async def run(
        self, name: str, signal: TurnSignal | None = None, **arguments: Any
    ) -> ToolOutput:
        return await self.tools[name].run(arguments, a_call(), signal or TurnCancellation().signal)
