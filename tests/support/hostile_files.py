"""Files a hostile repository can hold, for the file tools' tests: huge sparse files, and a
directory that trades places with a symlink while a tool resolves a path through it."""

from __future__ import annotations

import ctypes
from pathlib import Path

GIB = 1 << 30


def sparse_file(path: Path, size: int, head: bytes, tail: bytes) -> None:
    """`head`, a hole of zero bytes up to `size - len(tail)`, then `tail`: big but cheap."""
    with path.open("wb") as file:
        file.write(head)
        file.truncate(size)
        file.seek(size - len(tail))
        file.write(tail)


SWAPPER = """
import ctypes, os, sys
directory, link = (p.encode() for p in sys.argv[1:3])
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
print("swapping", flush=True)
while True:
    if libc.renameat2(AT_FDCWD, directory, AT_FDCWD, link, RENAME_EXCHANGE) != 0:
        raise SystemExit(f"renameat2: {os.strerror(ctypes.get_errno())}")
"""


def has_rename_exchange(tmp_path: Path) -> bool:
    (tmp_path / "probe-a").mkdir()
    (tmp_path / "probe-b").symlink_to("probe-a")
    libc = ctypes.CDLL(None, use_errno=True)
    a, b = bytes(tmp_path / "probe-a"), bytes(tmp_path / "probe-b")
    done = libc.renameat2(-100, a, -100, b, 2) == 0
    if done:
        libc.renameat2(-100, a, -100, b, 2)
    return done
