"""What a consent to workspace hooks was given for: the content of the hooks file and of
every file its commands name.

The user allows a workspace's hooks after seeing their commands. A command that runs a
script (`./lint.sh`, `python tools/check.py`) runs whatever that script holds when the hook
fires, and a sandboxed command, or an edit the mode allows without a question, can rewrite it.
So the consent is bound to a fingerprint: a digest of the hooks file and of every existing
regular file a command names (any word of the command, split on blanks and shell operators,
that is a file relative to the session's cwd or an absolute path; not the target of an output
redirection, which the hook writes rather than runs). Before each workspace hook
runs, the fingerprint is taken again; if a file changed, the user is asked again, naming it.

Files up to `DIGEST_LIMIT` bytes are hashed (sha256); a larger one (an interpreter binary) is
identified by its device, inode, size and modification time. Reading goes through
`read_small_file`, which neither blocks on a FIFO nor reads more than the limit.

Not covered: files a script reads without naming them on the hook's command line (a helper it
sources, the `package.json` behind `npm run lint`). See
docs/rfc/implemented/feature/2026-12-01-hook-consent-bound-to-content.md.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping

from acp_server.tools.local_files import read_small_file
from acp_server.tools.workspace import PathRefused

DIGEST_LIMIT = 1 << 20
"""Bytes of a named file that are hashed; a larger file is identified by its metadata."""

_TOKENS = re.compile(r">>?|[^\s;&|<>()`'\"=]+")
"""The words of a command between blanks and shell operators, and output redirections."""

Fingerprint = Mapping[str, str]
"""Path (as the command names it, or the hooks file's) -> digest of its content."""


def named_files(command: str, cwd: str) -> list[str]:
    """The existing regular files a hook command names, as absolute paths."""
    found: list[str] = []
    redirected = False
    for match in _TOKENS.finditer(command):
        word = match.group()
        if word.startswith(">"):
            redirected = True  # what a hook writes to is its output, not what it runs
            continue
        if redirected or word.startswith("-"):
            redirected = False
            continue
        path = os.path.normpath(word if os.path.isabs(word) else os.path.join(cwd, word))
        if os.path.isfile(path) and path not in found:
            found.append(path)
    return found


def _digest(path: str) -> str:
    try:
        return "sha256:" + hashlib.sha256(read_small_file(path, DIGEST_LIMIT)).hexdigest()
    except (OSError, PathRefused):
        try:
            info = os.stat(path)
        except OSError as exc:
            return f"missing: {exc.strerror or exc}"
        return f"stat:{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"


def fingerprint(hooks_files: Iterable[str], commands: Iterable[str], cwd: str) -> dict[str, str]:
    """The digests of the hooks files and of every file their commands name."""
    paths = list(dict.fromkeys(hooks_files))
    for command in commands:
        paths += [p for p in named_files(command, cwd) if p not in paths]
    return {path: _digest(path) for path in paths}


def changed(before: Fingerprint, after: Fingerprint) -> list[str]:
    """The paths whose content differs (or that appeared or disappeared) between the two."""
    return [
        path for path in dict.fromkeys([*before, *after]) if before.get(path) != after.get(path)
    ]
