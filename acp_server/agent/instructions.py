"""What the model is told before the conversation: our instructions, the environment it works
in, and the project's own instruction files (`AGENTS.md`).

The project files are read again at the first step of every turn (someone may edit them between
prompts) and never during a turn, so every request of one turn carries the same system prompt
and a provider's prompt cache keeps matching. They come from a repository the user may not
have written: a file that is not a regular file, that leaves the directory it sits in through a
link, or that is larger than the budget is never read past what the budget allows, and what was
cut is said in the prompt. A link that loops, a file or a repository directory that belongs to
another user (a shared parent such as /tmp), and a `.git/HEAD` that is not one branch name or
commit id are named with a note instead of being read; names and paths are shown on one line
with control characters escaped, so a repository cannot forge a heading of this prompt.
"""

from __future__ import annotations

import logging
import os
import platform
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from acp_server.cancellation import TurnSignal
from acp_server.printable import one_line
from acp_server.tools.custom_commands import skills_listing, user_commands_dir
from acp_server.tools.local_files import read_small_file
from acp_server.tools.repo_files import (
    directories_between,
    find_repository_root,
    read_capped,
)
from acp_server.tools.workspace import NotRegularFile

from .instruction_settings import DEFAULT_FILE_NAMES as DEFAULT_FILE_NAMES
from .instruction_settings import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES
from .instruction_settings import InstructionSettings as InstructionSettings
from .instruction_settings import instruction_settings as instruction_settings
from .instruction_settings import user_instructions_file as user_instructions_file

if TYPE_CHECKING:
    from .seams import StepInfo

log = logging.getLogger(__name__)

DEFAULT_SYSTEM_PROMPT = """\
You are acp-server, a coding agent. You work in the user's workspace through the tools you are
given, on the task the user sets; the user sees your messages and your tool calls in an editor.

How to work:
- Find out before you change: read the files and search the code that a change touches. Do not
  guess at an API, a path or a file's contents when a tool can tell you.
- Make small, deliberate edits that keep the surrounding style. Prefer editing a file to
  rewriting it, and never drop content you were not asked to change.
- Check your work: run the project's tests, linters or the program itself where that is
  possible, read what they print, and fix what you broke before you report.
- Long outputs are cut: read files by line windows (offset, limit) and narrow searches instead
  of asking for everything at once.
- If a tool call fails, read the error and change the call; do not repeat the same call.
- Stay inside the workspace unless the user asks otherwise, and ask before anything that is
  hard to undo.
- Be concise. Say what you did and what is left in a few sentences; no filler, no repetition of
  tool output the user has already seen.
- Instructions from project files below apply to this workspace; the user's own words in the
  conversation take precedence over them."""

_GIT_FILE_LIMIT = 4096


@dataclass(frozen=True)
class Roots:
    """The session's roots: its working directory and additional directories (what the
    system prompt describes; the tools check paths against the same roots through
    `acp_server.tools.workspace.PathRoots`)."""

    cwd: Path
    additional_directories: Sequence[Path] = ()


class ProjectInstructions:
    """The system-prompt seam's contribution: environment and instruction files.

    Install `refresh` on the pre-step seam and `assemble` on the system-prompt seam.
    """

    def __init__(self, workspace: Roots, settings: InstructionSettings) -> None:
        self._workspace = workspace
        self._settings = settings
        self._text = ""

    async def refresh(self, info: StepInfo, signal: TurnSignal) -> None:
        """Read the environment and the files again at the first step of a turn."""
        if info.step != 1 and self._text:
            return
        # Read on the event loop, not in a worker thread: the work is bounded (a few stats and
        # at most `max_bytes` read from regular files opened without blocking), and a thread
        # hop would let other sessions' frames interleave differently from run to run, which
        # --deterministic transcripts cannot afford.
        try:
            self._text = self.render()
        except (OSError, RuntimeError, ValueError, RecursionError) as exc:
            # A hostile repository may fail a tool call, never the prompt.
            log.warning("reading the project's instructions failed: %s", exc)
            self._text = (
                "# Environment\n"
                f"Working directory: {one_line(str(self._workspace.cwd))}\n"
                f"(the project's instruction files were not read: {one_line(str(exc))})"
            )

    async def assemble(self, parts: list[str], signal: TurnSignal) -> None:
        """Append the environment and instructions to the system prompt."""
        if self._text:
            parts.append(self._text)

    def render(self) -> str:
        """The environment block followed by the instruction files, as the model sees them."""
        sections = [describe_environment(self._workspace, self._settings.today())]
        instructions = read_instruction_files(self._workspace.cwd, self._settings)
        if instructions:
            sections.append(instructions)
        user_file = self._settings.user_file
        user_dir = user_commands_dir(user_file) if user_file is not None else None
        skills = skills_listing(self._workspace.cwd, user_dir, self._settings.skill_places)
        if skills:
            sections.append(skills)
        return "\n\n".join(sections)


def describe_environment(workspace: Roots, today: str) -> str:
    """A short block of facts about where the agent runs."""
    lines = ["# Environment", f"Working directory: {one_line(str(workspace.cwd))}"]
    if workspace.additional_directories:
        extra = ", ".join(one_line(str(d)) for d in workspace.additional_directories)
        lines.append(f"Additional directories: {extra}")
    lines.append(f"Platform: {platform.system() or 'unknown'}")
    lines.append(f"Shell: {os.environ.get('SHELL') or '/bin/sh'}")
    lines.append(f"Today's date: {today}")
    lines.append(f"Git: {_describe_git(workspace.cwd)}")
    return "\n".join(lines)


def read_instruction_files(cwd: Path, settings: InstructionSettings) -> str:
    """The instruction files that apply to `cwd`, most general first, within the budget."""
    if settings.max_bytes == 0:
        return ""  # switched off in the config file
    candidates: list[tuple[Path, Path | None]] = []
    if settings.user_file is not None:
        candidates.append((settings.user_file, None))  # the user's own: may link anywhere
    root = find_repository_root(cwd) or cwd
    for directory in directories_between(root, cwd):
        for name in settings.file_names:
            candidates.append((directory / name, root))
    remaining = settings.max_bytes
    blocks: list[str] = []
    for path, must_stay_in in candidates:
        found = read_capped(path, must_stay_in, remaining)
        if found is None:
            continue
        text, size, note = found
        if not text and not note:
            continue  # an empty file says nothing
        remaining -= len(text.encode("utf-8"))
        header = f"# Instructions from {one_line(str(path))}"
        if note:
            header += f"\n({note})"
        elif len(text.encode("utf-8")) < size:
            header += (
                f"\n(cut: the file has {size:,} bytes and only the first "
                f"{len(text.encode('utf-8')):,} fit the {settings.max_bytes:,}-byte budget for "
                "instruction files)"
            )
        blocks.append(f"{header}\n{text}".rstrip())
    return "\n\n".join(blocks)


_BRANCH = re.compile(r"[^\x00-\x20\x7f~^:?*\[\\]{1,255}")
"""What git allows in a branch name, roughly: no controls, spaces or `~^:?*[\\`."""
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _describe_git(cwd: Path) -> str:
    """Whether `cwd` is in a git repository and on which branch, read from files (running
    `git` in a hostile repository could execute its configuration)."""
    root = find_repository_root(cwd)
    if root is None:
        return "not a git repository"
    git_dir = root / ".git"
    try:
        if not git_dir.is_dir():
            # A worktree or submodule: `.git` is a file `gitdir: PATH`.
            pointer = _small_text(git_dir)
            target = pointer.removeprefix("gitdir:").strip()
            git_dir = (root / target) if target else git_dir
        head = _small_text(git_dir / "HEAD").strip()
    except (OSError, NotRegularFile, ValueError):  # a FIFO, a huge file, a NUL in the pointer
        return f"a repository at {one_line(str(root))}"
    where = f"a repository at {one_line(str(root))}"
    branch = head.removeprefix("ref: refs/heads/")
    if head.startswith("ref: refs/heads/") and _BRANCH.fullmatch(branch) and branch.isprintable():
        return f"{where}, on branch {branch}"
    if _COMMIT.fullmatch(head):
        return f"{where}, detached HEAD at {head[:12]}"
    if head:
        return f"{where} (its HEAD is neither a branch nor a commit id)"
    return where


def _small_text(path: Path) -> str:
    """A file of git's own bookkeeping: small, regular, read without blocking."""
    return read_small_file(str(path), _GIT_FILE_LIMIT).decode("utf-8", errors="replace")
