"""Custom slash commands: Markdown files in `.acp-server/commands/` (every directory from the
repository root down to the session's cwd) and in the user's config dir
(`$XDG_CONFIG_HOME/acp-server/commands/`). `/NAME args` expands the file's body with the
arguments and becomes the user's prompt. Skills (a folder holding `SKILL.md`, in
`.agents/skills/` or `.claude/skills/` of the same directories, or the config dir's `skills/`;
the places are configurable, `tools/skill_places.py`) are listed the same way; their body is
given unchanged.

The files come from a repository the user may not have written, so they get the AGENTS.md
treatment (`repo_files.read_capped`): a link out of the repository, a FIFO, a file of another
user or a huge file is refused without blocking, and a commands directory that resolves outside
the repository is not read. A scan reads at most `SCAN_BYTES` of at most `MAX_FILES` files per
directory (the front matter); the body is read, within `MAX_BODY_BYTES`, only when the command
runs. See docs/rfc/implemented/feature/2026-12-01-custom-commands.md.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from acp_server.printable import one_line

from .repo_files import directories_between, find_repository_root, read_capped
from .skill_places import SkillPlaces
from .workspace import PathRefused, real_path

log = logging.getLogger(__name__)

COMMANDS_DIR = Path(".acp-server") / "commands"
MAX_FILES = 100
"""Files looked at per commands directory; the rest are named in a note."""
SCAN_BYTES = 4096
"""Read of each file at a scan: enough for its front matter."""
MAX_BODY_BYTES = 64 * 1024
"""A command file larger than this is refused when it runs (not cut: a cut prompt misleads)."""
MAX_DESCRIPTION = 200
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9][0-9]?)")


@dataclass(frozen=True)
class CustomCommand:
    """One command file, as a scan found it."""

    name: str
    description: str
    hint: str | None
    path: Path
    must_stay_in: Path | None
    """The repository root a project file may not link out of; None for the user's own."""
    skill: bool = False
    """A skill's `SKILL.md`: its body is given as written (no `$1` substitution)."""


@dataclass(frozen=True)
class Shadowing:
    """A repository's command or skill that replaces the user's own of the same name."""

    name: str
    user_file: Path
    repository_file: Path


@dataclass(frozen=True)
class CommandScan:
    """The custom commands of a session, and what the user should be told about them."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    clashes: tuple[str, ...] = ()
    """Names of files shadowed by a built-in command (the built-in wins)."""
    notes: tuple[str, ...] = ()
    """Files or directories that were refused, and why."""
    shadowed: tuple[Shadowing, ...] = ()
    """The user's own commands and skills that a repository file replaces (it wins)."""

    def listing(self) -> tuple[tuple[str, str, str | None], ...]:
        """What the client is shown: (name, description, hint), sorted; compare to refresh."""
        return tuple(
            (c.name, c.description, c.hint)
            for c in sorted(self.commands.values(), key=lambda c: c.name)
        )


def user_commands_dir(user_instructions: Path) -> Path:
    """The user's commands directory, next to their AGENTS.md in the config dir."""
    return user_instructions.parent / "commands"


def scan_commands(
    cwd: Path,
    user_dir: Path | None,
    builtins: Collection[str],
    skill_places: SkillPlaces = SkillPlaces(),  # noqa: B008 - frozen: one shared default is safe
) -> CommandScan:
    """The commands that apply to `cwd`: the user's first, then the repository's from its root
    down to `cwd`; a deeper file overrides a shallower one of the same name (a repository's
    the user's own: `shadowed` names them, for the user to be told), and a built-in name is
    never overridden. Skills are looked for in `skill_places`."""
    places: list[tuple[Path, Path | None, bool]] = []
    if user_dir is not None:
        places.append((user_dir.parent / "skills", None, True))
    places.extend((directory, None, True) for directory in reversed(skill_places.user))
    if user_dir is not None:
        places.append((user_dir, None, False))
    root = find_repository_root(cwd) or cwd
    for directory in directories_between(root, cwd):
        places.extend(
            (directory / skills, root, True) for skills in reversed(skill_places.repository)
        )
        places.append((directory / COMMANDS_DIR, root, False))
    commands: dict[str, CustomCommand] = {}
    clashes: list[str] = []
    notes: list[str] = []
    users: dict[str, Path] = {}
    for directory, must_stay_in, skills in places:
        for command in _scan_directory(directory, must_stay_in, notes, skills=skills):
            if command.name in builtins:
                if command.name not in clashes:
                    clashes.append(command.name)
                continue
            if command.must_stay_in is None:
                users[command.name] = command.path
            commands[command.name] = command
    shadowed = tuple(
        Shadowing(name, path, commands[name].path)
        for name, path in sorted(users.items())
        if commands[name].must_stay_in is not None
    )
    return CommandScan(commands, tuple(clashes), tuple(notes), shadowed)


def scan_skills(
    cwd: Path,
    user_dir: Path | None,
    places: SkillPlaces = SkillPlaces(),  # noqa: B008 - frozen: one shared default is safe
) -> CommandScan:
    """Only the skills of `cwd` and the user's config dir (`user_dir` is its commands dir, as
    for `scan_commands`)."""
    scan = scan_commands(cwd, user_dir, (), places)
    return CommandScan({n: c for n, c in scan.commands.items() if c.skill}, (), scan.notes)


SKILLS_LISTING_BYTES = 4096
"""The budget of the system prompt's list of skills; the rest is cut with a note."""


def skills_listing(
    cwd: Path,
    user_dir: Path | None,
    places: SkillPlaces = SkillPlaces(),  # noqa: B008 - frozen: one shared default is safe
) -> str:
    """The system prompt's `# Skills` block: names and descriptions only, within
    `SKILLS_LISTING_BYTES`; "" when there are none."""
    skills = sorted(scan_skills(cwd, user_dir, places).commands.values(), key=lambda c: c.name)
    if not skills:
        return ""
    lines = ["# Skills", "Load one with the `skill` tool when its description fits the task:"]
    used = sum(len(line) + 1 for line in lines)
    for number, skill in enumerate(skills):
        line = f"- {skill.name}: {skill.description}"
        if used + len(line.encode("utf-8")) + 1 > SKILLS_LISTING_BYTES:
            lines.append(f"({len(skills) - number} more not listed: the list is cut at its budget)")
            break
        lines.append(line)
        used += len(line.encode("utf-8")) + 1
    return "\n".join(lines)


def _scan_directory(
    directory: Path, must_stay_in: Path | None, notes: list[str], *, skills: bool = False
) -> list[CustomCommand]:
    if not os.path.isdir(directory):
        return []
    where = one_line(str(directory))
    if must_stay_in is not None:
        try:
            inside = Path(real_path(str(directory))).is_relative_to(real_path(str(must_stay_in)))
        except (OSError, PathRefused) as exc:
            notes.append(f"{where}: skipped, its path cannot be resolved ({exc})")
            return []
        if not inside:
            notes.append(f"{where}: skipped, it leads outside {one_line(str(must_stay_in))}")
            return []
    try:
        with os.scandir(directory) as entries:
            names = sorted(
                e.name if skills else e.name[: -len(".md")]
                for e in entries
                if (e.is_dir() if skills else e.name.endswith(".md"))
            )
    except OSError as exc:
        notes.append(f"{where}: skipped, cannot list it ({exc.strerror})")
        return []
    if len(names) > MAX_FILES:
        notes.append(f"{where}: only the first {MAX_FILES} of {len(names)} files were read")
        names = names[:MAX_FILES]
    found: list[CustomCommand] = []
    for name in names:
        path = directory / name / "SKILL.md" if skills else directory / f"{name}.md"
        if skills and must_stay_in is not None and not _inside(path.parent, must_stay_in):
            notes.append(f"{one_line(str(path.parent))}: skipped, it leads outside the repository")
            continue
        read = read_capped(path, must_stay_in, SCAN_BYTES)
        if read is None:
            continue
        text, _, note = read
        if note:
            notes.append(f"{one_line(str(path))}: {note}")
            continue
        meta, body = split_front_matter(text)
        if skills and _NAME.fullmatch(meta.get("name", "")):
            name = meta["name"]
        if not _NAME.fullmatch(name):
            notes.append(f"{one_line(str(path))}: skipped, not a usable command name")
            continue
        description = meta.get("description") or _first_line(body) or f"Run {name}"
        hint = meta.get("argument-hint") or None
        found.append(
            CustomCommand(
                name=name,
                description=_cap(one_line(description)),
                hint=_cap(one_line(hint)) if hint else None,
                path=path,
                must_stay_in=must_stay_in,
                skill=skills,
            )
        )
    return found


def _inside(directory: Path, root: Path) -> bool:
    try:
        return Path(real_path(str(directory))).is_relative_to(real_path(str(root)))
    except (OSError, PathRefused):
        return False


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """(`key: value` pairs of a leading `---` block, the rest). Only flat scalar lines are
    understood; anything else in the block is ignored. No front matter: ({}, text)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    meta: dict[str, str] = {}
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return meta, "".join(lines[index + 1 :])
        key, colon, value = line.partition(":")
        if colon and key.strip() and not key.startswith((" ", "\t", "#")):
            meta[key.strip().lower()] = _unquote(value.strip())
    return {}, text  # never closed: not front matter


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()
    return ""


def _cap(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


class CommandUnreadable(Exception):
    """The command's file could not be read when it ran; the message says why."""


def expand_command(command: CustomCommand, arguments: str) -> str:
    """The prompt `/NAME arguments` stands for: the file's body (front matter removed) with
    `$ARGUMENTS` replaced by all arguments and `$1`..`$99` by each (shell-like words; a missing
    one is empty). A body without placeholders gets the arguments appended on their own line.
    Replacement is one pass: an argument holding `$1` is not expanded again."""
    read = read_capped(command.path, command.must_stay_in, MAX_BODY_BYTES + 1)
    where = one_line(str(command.path))
    if read is None:
        raise CommandUnreadable(f"{where} is gone")
    text, size, note = read
    if note:
        raise CommandUnreadable(f"{where}: {note}")
    if size > MAX_BODY_BYTES or len(text.encode("utf-8")) > MAX_BODY_BYTES:
        raise CommandUnreadable(
            f"{where} has {size:,} bytes; command files are limited to {MAX_BODY_BYTES:,}"
        )
    _, body = split_front_matter(text)
    if command.skill:
        where_dir = one_line(str(command.path.parent))
        body = body.strip("\n")
        head = f"Use the skill {command.name} (its files are in {where_dir}):\n\n{body}"
        return f"{head}\n\n{arguments}" if arguments else head
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words then
        words = arguments.split()

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    if _PLACEHOLDER.search(body) is None:
        body = body.rstrip("\n")
        return f"{body}\n\n{arguments}" if arguments else body
    return _PLACEHOLDER.sub(substitute, body).rstrip("\n")
