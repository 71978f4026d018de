"""Keys out of the agent's own `/proc/<pid>/environ`.

`/proc/<pid>/environ` does not show `os.environ`: it shows the bytes between the kernel's
`env_start` and `env_end` addresses of the process, the environment block `execve` copied onto
the stack. Changing `os.environ` (or calling `unsetenv`) rewrites neither, and any process of
the same user, root included, may read that file. So the values are overwritten where they are:
`scrub(names)` zeroes, in this process's own block, every `NAME=value` entry it names.

Python's `os.environ` is a copy made at start-up; it keeps the values for the providers, which
read them when a model is loaded (also later, when the client switches models).

Linux only; elsewhere, or when `/proc/self/stat` does not give the block, nothing is done.
The decision, and what it does not cover: docs/rfc/implemented/architecture/2026-12-01-secrets.md.
"""

from __future__ import annotations

import ctypes
from collections.abc import Collection
from pathlib import Path

_ENV_START_FIELD = 50
"""`env_start` in /proc/[pid]/stat (proc(5), since Linux 3.5); `env_end` follows it."""


def environment_block() -> tuple[int, int] | None:
    """The (start, end) addresses of this process's initial environment block, or None."""
    try:
        stat = Path("/proc/self/stat").read_bytes()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat[stat.rindex(b")") + 2 :].split()
    index = _ENV_START_FIELD - 3  # the first field after the name is field 3
    if len(fields) <= index + 1:
        return None
    start, end = int(fields[index]), int(fields[index + 1])
    return (start, end) if 0 < start < end else None


def scrub(names: Collection[str]) -> list[str]:
    """Zero every `NAME=value` entry of the named variables in this process's initial
    environment block (what /proc/self/environ shows); return the names scrubbed."""
    block = environment_block()
    if block is None or not names:
        return []
    start, end = block
    data = ctypes.string_at(start, end - start)
    wanted = {name.encode() for name in names}
    scrubbed: list[str] = []
    offset = 0
    for entry in data.split(b"\0"):
        name, equals, _ = entry.partition(b"=")
        if equals and name in wanted:
            ctypes.memset(start + offset, 0, len(entry))
            scrubbed.append(name.decode())
        offset += len(entry) + 1
    return scrubbed
