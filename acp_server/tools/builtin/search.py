"""Search tools on ripgrep: `glob` (file names) and `grep` (file contents).

Both run `rg` (`ripgrep.Ripgrep`: the binary of the `ripgrep` package, through the one
process spawner, killed with its group when the turn aborts) and read its output as it
streams (`rg_output`), keeping what they show and counting the rest. ripgrep's regex engine
is linear-time, and nothing here runs a backtracking regex over file contents, so no pattern
can freeze the event loop. Both respect `.gitignore` / `.ignore` unless `include_ignored` is
set, search hidden files but never `.git`, and never follow a symbolic link below the path
they start from (that path itself is resolved and checked against the workspace first). See
docs/rfc/implemented/feature/2026-12-01-search-on-ripgrep.md.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from subprocess import DEVNULL
from typing import Annotated, Any

import anyio.to_thread
import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.tools.base import Location, ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.budget import ToolBudget
from acp_server.tools.builtin._common import (
    BuiltinTool,
    failed,
    fitting,
    plural,
    shorten,
    str_arg,
)
from acp_server.tools.builtin.rg_output import GlobReader, GrepReader, PathPattern
from acp_server.tools.builtin.ripgrep import RgExit, Ripgrep, RipgrepMissing
from acp_server.tools.local_files import open_checked
from acp_server.tools.workspace import PathChanged, PathRefused, PathRoots

_DEFAULT = ToolBudget()
GREP_MAX_FILE_BYTES = 10 * 1024 * 1024
GREP_MAX_LINE_CHARS = 400
MAX_PATTERN_CHARS = 4096
_MAGIC = re.compile(r"[*?[]")
_COMMON = ["--no-config", "--hidden", "--no-require-git", "--glob", "!.git"]
"""Every rg run: no user config file, hidden files but not `.git`, `.gitignore` honoured
outside a git checkout too. No `--sort`: rg searches on every core, and the readers keep the
first results in path order themselves."""

_INCLUDE_IGNORED = {
    "type": "boolean",
    "description": (
        "Also search files that .gitignore / .ignore exclude (default false: they are skipped)."
    ),
}


def _open_root(root: str, directory: bool) -> int:
    """`root` opened without following a link on the way; `PathChanged` when it was
    swapped for a link, or for something of the other kind, since it was checked."""
    fd = open_checked(root, os.O_RDONLY)
    if stat.S_ISDIR(os.fstat(fd).st_mode) != directory:
        os.close(fd)
        raise PathChanged(root, "it was replaced")
    return fd


def _cwd_of(fd: int, root: str) -> str:
    """A working directory for rg that is the directory `fd` was opened on, whatever
    happened to its path since: the child's chdir goes through its own /proc/self/fd (it
    still has our descriptors then). Without /proc, the path itself."""
    return f"/proc/self/fd/{fd}" if os.path.isdir("/proc/self/fd") else root


def _rg_error(ended: RgExit) -> str:
    return ended.stderr.removeprefix("rg: ") or f"rg exited with status {ended.code}"


def _notes(ended: RgExit) -> list[str]:
    """What rg said on stderr when it still produced results (unreadable files...)."""
    if not ended.stderr:
        return []
    first = ended.stderr.splitlines()[0].removeprefix("rg: ")
    return [f"some paths could not be searched: {shorten(first, 200)}"]


# glob ----------------------------------------------------------------------------------------


class GlobArgs(msgspec.Struct, forbid_unknown_fields=True):
    pattern: Annotated[
        str, msgspec.Meta(description="The glob pattern, e.g. `**/*.py` or `src/*/test_*.py`.")
    ]
    include_ignored: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "Also search files that .gitignore / .ignore exclude (default false: they are "
                "skipped)."
            )
        ),
    ] = False


def _split_pattern(pattern: str, cwd: str) -> tuple[str, list[str]]:
    """The literal directory a pattern starts from, and its remaining segments."""
    full = pattern if os.path.isabs(pattern) else os.path.join(cwd, pattern)
    segments = full.split(os.sep)
    literal: list[str] = []
    while segments and not _MAGIC.search(segments[0]):
        literal.append(segments.pop(0))
    base = os.sep.join(literal) or os.sep
    return base, segments


class Glob(BuiltinTool[GlobArgs]):
    name = "glob"
    kind: ToolKind = "search"
    args_type = GlobArgs

    def __init__(
        self,
        path_roots: PathRoots,
        *,
        max_results: int = _DEFAULT.max_search_results,
        max_bytes: int = _DEFAULT.body_bytes,
        ripgrep: Ripgrep | None = None,
    ) -> None:
        super().__init__(path_roots)
        self.max_results = max_results
        self.max_bytes = max_bytes
        self.ripgrep = ripgrep if ripgrep is not None else Ripgrep()
        self.description = (
            "Find files whose paths match a glob pattern, relative to the working directory "
            "(or an absolute pattern inside the workspace). `*` and `?` match within one path "
            "segment, `[abc]` matches one character of a set, and `**` matches any number of "
            "directories, e.g. `src/**/*.py`. Results are absolute paths of files (not "
            "directories), in path order; files ignored by .gitignore / .ignore are skipped "
            "unless `include_ignored` is true, `.git` always is, and symbolic links are not "
            f"followed. At most {max_results} are shown, with the total."
        )

    def title(self, arguments: Mapping[str, Any]) -> str:
        pattern = str_arg(arguments, "pattern")
        return f"Find `{shorten(pattern)}`" if pattern else "Find files"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        pattern = str_arg(arguments, "pattern")
        if pattern is None:
            return []
        base, _ = _split_pattern(pattern, self.path_roots.cwd)
        try:
            return [Location(self.path_roots.resolve(base))]
        except PathRefused:
            return []

    async def act(self, args: GlobArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        if not args.pattern.strip():
            return failed("pattern is empty: give a glob pattern such as `**/*.py`")
        if len(args.pattern) > MAX_PATTERN_CHARS:
            return failed(f"pattern is over {MAX_PATTERN_CHARS} characters")
        base, rest = _split_pattern(args.pattern, self.path_roots.cwd)
        root = self.check(base)
        where = [Location(root)]
        segments = [segment for segment in rest if segment not in ("", ".")]
        if ".." in segments:
            return failed("`..` after a wildcard is not supported: put it before the first one")
        nothing = ToolOutput(f"No paths match `{args.pattern}`", locations=where)
        if not segments:  # no wildcard: the path itself, if it is there
            exists = await anyio.to_thread.run_sync(os.path.lexists, root)
            return ToolOutput(root, locations=where) if exists else nothing
        if "\0" in args.pattern or not await anyio.to_thread.run_sync(os.path.isdir, root):
            return nothing
        reader = GlobReader(root, PathPattern(segments), self.max_results)

        async def consume(chunk: bytes) -> None:
            # Matching runs in a worker thread: many names per chunk, each match short.
            await anyio.to_thread.run_sync(reader.feed, chunk)

        argv = ["--files", "--null", *_COMMON]
        if "**" not in segments:  # no file deeper than the pattern can match
            argv += ["--max-depth", str(len(segments))]
        if args.include_ignored:
            argv.append("--no-ignore")
        fd = await anyio.to_thread.run_sync(_open_root, root, True)
        try:
            ended = await self.ripgrep.run(
                [*argv, "--", "."], cwd=_cwd_of(fd, root), signal=signal, consume=consume
            )
        except RipgrepMissing as exc:
            return failed(str(exc))
        finally:
            os.close(fd)
        reader.finish()
        if ended.code not in (0, 1) and not reader.total:
            return failed(f"glob failed: {_rg_error(ended)}")
        if not reader.total:
            return nothing
        shown = fitting(reader.paths, self.max_bytes)
        notes = _notes(ended) if ended.code != 0 else []
        if reader.total > len(shown):
            notes.insert(
                0,
                f"showing {len(shown)} of {plural(reader.total, 'match', 'matches')}; "
                "use a narrower pattern",
            )
        text = "\n".join(shown)
        if notes:
            text += "\n[" + "; ".join(notes) + "]"
        return ToolOutput(text, locations=where)


# grep ----------------------------------------------------------------------------------------


class GrepArgs(msgspec.Struct, forbid_unknown_fields=True):
    pattern: Annotated[
        str, msgspec.Meta(description="A regular expression (ripgrep's syntax, close to Python's).")
    ]
    path: Annotated[
        str | None,
        msgspec.Meta(description="File or directory to search (default: the working directory)."),
    ] = None
    include_ignored: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "Also search files that .gitignore / .ignore exclude (default false: they are "
                "skipped)."
            )
        ),
    ] = False


def _kind_of(path: str) -> str | None:
    """'dir', 'file', another kind's name for what is at `path`, or None if nothing is."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "not a regular file"


class Grep(BuiltinTool[GrepArgs]):
    name = "grep"
    kind: ToolKind = "search"
    args_type = GrepArgs

    def __init__(
        self,
        path_roots: PathRoots,
        *,
        max_matches: int = _DEFAULT.max_search_results,
        max_bytes: int = _DEFAULT.body_bytes,
        ripgrep: Ripgrep | None = None,
    ) -> None:
        super().__init__(path_roots)
        self.max_matches = max_matches
        self.max_bytes = max_bytes
        self.ripgrep = ripgrep if ripgrep is not None else Ripgrep()
        self.description = (
            "Search the contents of text files for a regular expression, line by line, with "
            "ripgrep (Rust regex syntax: like Python's, without look-around or "
            "backreferences). `path` is a file or a directory searched recursively (default: "
            "the working directory); binary files, files over "
            f"{GREP_MAX_FILE_BYTES // (1024 * 1024)} MiB and `.git` are skipped, and so are "
            "files ignored by .gitignore / .ignore unless `include_ignored` is true; symbolic "
            "links are not followed. Each match is printed as `path:line: text` with an "
            f"absolute path; at most {plural(max_matches, 'match', 'matches')} are shown, "
            "with the total. Use `(?i)` for a case-insensitive search and escape regex "
            "metacharacters to find literal text."
        )

    def title(self, arguments: Mapping[str, Any]) -> str:
        pattern = str_arg(arguments, "pattern")
        title = f"Search `{shorten(pattern)}`" if pattern else "Search"
        path = str_arg(arguments, "path")
        return f"{title} in {self.display(path)}" if path else title

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return self.location_of(arguments, "path", self.path_roots.cwd)

    async def act(self, args: GrepArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        if len(args.pattern) > MAX_PATTERN_CHARS:
            return failed(f"pattern is over {MAX_PATTERN_CHARS} characters")
        root = self.check(args.path or self.path_roots.cwd)
        kind = await anyio.to_thread.run_sync(_kind_of, root)
        if kind is None:
            return failed(f"Path not found: {root}")
        if kind not in ("dir", "file"):
            return failed(f"Refused: {root} is {kind}; only files and directories are searched")
        where = [Location(root)]
        single_file = kind == "file"
        reader = GrepReader(self.max_matches, GREP_MAX_LINE_CHARS, root, single_file)
        if "\0" not in args.pattern:  # a NUL never matches: files holding one are binary

            async def consume(chunk: bytes) -> None:
                reader.feed(chunk)

            argv = ["--json", *_COMMON, "--max-filesize", str(GREP_MAX_FILE_BYTES)]
            if args.include_ignored:
                argv.append("--no-ignore")
            # The root is opened without following links and rg given the descriptor: a
            # directory as its working directory, a file as its stdin.
            fd = await anyio.to_thread.run_sync(_open_root, root, not single_file)
            try:
                if single_file and os.fstat(fd).st_size > GREP_MAX_FILE_BYTES:
                    return failed(
                        f"{root} is over {GREP_MAX_FILE_BYTES // (1024 * 1024)} MiB; "
                        "read it in windows with read_file"
                    )
                ended = await self.ripgrep.run(
                    [*argv, f"--regexp={args.pattern}", "--", "-" if single_file else "."],
                    cwd=os.path.dirname(root) if single_file else _cwd_of(fd, root),
                    signal=signal,
                    consume=consume,
                    stdin=fd if single_file else DEVNULL,
                )
            except RipgrepMissing as exc:
                return failed(str(exc))
            finally:
                os.close(fd)
            reader.finish()
            if ended.code not in (0, 1) and reader.searched is None:
                error = _rg_error(ended)
                if "regex" in error:
                    return failed(f"Invalid regular expression {args.pattern!r}: {error}")
                return failed(f"grep failed: {error}")
        else:
            ended = RgExit(1, "")
        return self._report(args.pattern, root, reader, ended, where)

    def _report(
        self,
        pattern: str,
        root: str,
        reader: GrepReader,
        ended: RgExit,
        where: list[Location],
    ) -> ToolOutput:
        notes = _notes(ended) if ended.code != 0 else []
        lines = fitting(reader.lines, self.max_bytes)
        if reader.matches > len(lines):
            notes.insert(
                0,
                f"showing {len(lines)} of {plural(reader.matches, 'match', 'matches')} in "
                f"{plural(reader.matched_files, 'file')}; narrow the pattern or path",
            )
        text = "\n".join(lines) if lines else f"No matches for `{pattern}` in {root}"
        if notes:
            text += "\n[" + "; ".join(notes) + "]"
        return ToolOutput(text, locations=where)
