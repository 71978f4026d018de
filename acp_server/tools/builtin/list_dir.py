"""`list_dir`: the entries of one directory, sorted by name, at most `max_entries` of them.

Asked of the local disk through the same link-refusing opens as the file tools
(`local_files`); a directory of millions of entries costs memory for the shown ones only and
checks the turn signal while it streams past.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Annotated, Any

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.tools.base import Location, ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.budget import ToolBudget, utf8_size
from acp_server.tools.builtin._common import BuiltinTool, failed, fitting, plural, str_arg
from acp_server.tools.local_files import Stopped, in_thread, open_checked, stopper
from acp_server.tools.workspace import PathRoots

_DEFAULT = ToolBudget()


class ListDirArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[
        str | None,
        msgspec.Meta(description="The directory to list (default: the working directory)."),
    ] = None


def _list(path: str, check: Callable[[], None], keep: int) -> tuple[list[str], int]:
    """The first `keep` entry names of the directory in sorted order (directories with a
    trailing '/'), and how many entries it has. Memory follows `keep`, not the directory:
    a heap keeps the smallest names while the scan streams past."""
    fd = open_checked(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        scan = os.scandir(fd)
    finally:
        os.close(fd)  # scandir works on its own duplicate
    total = 0

    def names() -> Iterator[str]:
        nonlocal total
        with scan:
            for entry in scan:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                total += 1
                if total % 10000 == 0:
                    check()  # a directory of millions of entries must not outlive the turn
                yield entry.name + "/" if is_dir else entry.name

    return heapq.nsmallest(keep, names()), total


class ListDir(BuiltinTool[ListDirArgs]):
    name = "list_dir"
    kind: ToolKind = "read"
    args_type = ListDirArgs

    def __init__(
        self,
        path_roots: PathRoots,
        *,
        max_entries: int = _DEFAULT.max_search_results,
        max_bytes: int = _DEFAULT.body_bytes,
    ) -> None:
        super().__init__(path_roots)
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.description = (
            "List the entries of a directory in the workspace (default: the working "
            f"directory), sorted by name; directories end with '/'. At most {max_entries} "
            "entries are shown. Use glob to find files by pattern across directories."
        )

    def title(self, arguments: Mapping[str, Any]) -> str:
        return f"List {self.display(str_arg(arguments, 'path') or '.')}"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return self.location_of(arguments, "path", self.path_roots.cwd)

    async def act(self, args: ListDirArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        path = self.check(args.path or self.path_roots.cwd)
        try:
            entries, total = await in_thread(_list, path, stopper(signal), self.max_entries)
        except Stopped:
            signal.raise_if_aborted()
            raise
        except FileNotFoundError:
            return failed(f"Directory not found: {path}")
        except NotADirectoryError:
            return failed(f"{path} is a file, not a directory; use read_file to read it")
        except OSError as exc:
            return failed(f"Cannot list {path}: {exc.strerror or exc}")
        signal.raise_if_aborted()
        where = [Location(path)]
        if not total:
            return ToolOutput(f"{path} is empty", locations=where)
        shown = fitting(entries, self.max_bytes - utf8_size(path))
        text = f"{path}:\n" + "\n".join(shown)
        if total > len(shown):
            text += (
                f"\n[showing {len(shown)} of {plural(total, 'entry', 'entries')}; use "
                "glob with a pattern to find the others]"
            )
        return ToolOutput(text, locations=where)
