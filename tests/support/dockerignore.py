"""What a container build sees of this checkout, without a container engine.

`DockerIgnore` reads a `.dockerignore` the way Docker and BuildKit do (moby's `ignorefile` and
`patternmatcher` packages): `#` lines are comments, each pattern is trimmed and cleaned like a
path, a leading `/` is dropped, `!` re-admits what an earlier pattern excluded, and the last
pattern that matches a path (or one of its parent directories) decides. In a pattern `*` and
`?` stay within one path segment, `**` spans any number of them (none included), `[...]` is a
character class and `\\` escapes the next character.

`copied_sources` lists what a Dockerfile's COPY and ADD instructions take from the build
context (not those with `--from`, which copy from another stage or image).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

_ESCAPED = set(".+()|{}$")  # what patternmatcher escapes before handing the rest to regexp


@dataclass(frozen=True)
class Pattern:
    text: str
    exclusion: bool  # a `!` pattern: admits again what it matches
    regex: re.Pattern[str]


def _clean(path: str) -> str:
    """Go's filepath.Clean for a relative or absolute slash path."""
    cleaned = posixpath.normpath(path)
    return "/" + cleaned.lstrip("/") if cleaned.startswith("/") else cleaned


def _compile(pattern: str) -> re.Pattern[str]:
    """patternmatcher's Pattern.compile: the pattern as an anchored regular expression."""
    out = "^"
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            if pattern[i + 1 : i + 2] == "*":
                i += 1
                if pattern[i + 1 : i + 2] == "/":
                    i += 1
                out += ".*" if i + 1 == len(pattern) else "(.*/)?"
            else:
                out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch in _ESCAPED:
            out += "\\" + ch
        elif ch == "\\":
            if i + 1 == len(pattern):
                raise ValueError(f"bad pattern {pattern!r}: it ends in an escape")
            i += 1
            out += re.escape(pattern[i])
        else:
            out += ch  # `[` and `]` pass through as a character class, as in Go's regexp
        i += 1
    return re.compile(out + r"\Z")


class DockerIgnore:
    """The patterns of one `.dockerignore`, in file order."""

    def __init__(self, text: str) -> None:
        self.patterns: list[Pattern] = []
        for number, raw in enumerate(text.splitlines()):
            line = raw.removeprefix("\ufeff") if number == 0 else raw
            if line.startswith("#"):
                continue
            line = line.strip()
            if not line:
                continue
            exclusion = line.startswith("!")
            if exclusion:
                line = line[1:].strip()
                if not line:
                    raise ValueError('illegal exclusion pattern: "!"')
            line = _clean(line)
            if len(line) > 1 and line.startswith("/"):
                line = line[1:]
            self.patterns.append(Pattern(line, exclusion, _compile(line)))

    @classmethod
    def read(cls, path: Path) -> DockerIgnore:
        return cls(path.read_text() if path.exists() else "")

    def excludes(self, path: str) -> bool:
        """Whether the build context leaves out `path` (relative to the context, `/`-separated):
        patternmatcher's MatchesOrParentMatches, which the builders use."""
        path = _clean(path)
        if path == ".":
            return False
        parent = posixpath.dirname(path)
        parent_dirs = parent.split("/") if parent else []
        matched = False
        for pattern in self.patterns:
            if pattern.exclusion != matched:
                continue  # cannot change the outcome
            candidates = [path] + ["/".join(parent_dirs[: i + 1]) for i in range(len(parent_dirs))]
            hit = any(pattern.regex.match(c) for c in candidates)
            if hit:
                matched = not pattern.exclusion
        return matched


def _instructions(dockerfile: str) -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    joined: list[str] = []
    pending = ""
    for line in dockerfile.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # a comment line inside a continued instruction
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        joined.append(pending + stripped)
        pending = ""
    if pending:
        joined.append(pending)
    return joined


def copied_sources(dockerfile: str) -> list[str]:
    """The build-context paths that COPY and ADD instructions name as sources, in order."""
    sources: list[str] = []
    for instruction in _instructions(dockerfile):
        keyword, _, rest = instruction.partition(" ")
        if keyword.upper() not in ("COPY", "ADD"):
            continue
        words = shlex.split(rest)
        flags = [w for w in words if w.startswith("--")]
        if any(f.startswith("--from") for f in flags):
            continue
        args = [w for w in words if not w.startswith("--")]
        if args and args[0].startswith("["):  # the exec (JSON array) form
            args = json.loads(rest[rest.index("[") :])
        sources += [_clean(a).lstrip("/") or "." for a in args[:-1]]
    return sources
