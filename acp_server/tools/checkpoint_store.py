"""The checkpoint store: content-addressed blobs under a total cap, shared by every session
(and every process) that uses one data dir.

A blob lives at ``<root>/<aa>/<sha256>``. `CheckpointStore.put` writes it to a temporary file,
fsyncs it and renames it into place, so a crash never leaves a torn blob under a blob's name;
`get` checks the SHA-256 again, so a damaged blob is reported, never restored. Every `put`
holds an exclusive `flock` on ``<root>/.lock`` (one open file per call, so two threads of one
process exclude each other as two processes do) while it writes and then evicts the least
recently written blobs until the store is under `max_total_bytes`
(`[tools] max_checkpoint_store_bytes`). "Written" is the blob's mtime, which each `put` of
that content (new or already there) sets above every other blob's, so the order is exact even
on a file system with coarse timestamps. Temporary files seen while holding the lock are left
by a writer that died and are removed.
See docs/rfc/implemented/feature/2026-12-02-checkpoints-and-rewind.md.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_STORE_BYTES = 256 << 20
"""The most the checkpoint store holds in all (`[tools] max_checkpoint_store_bytes`)."""

LOCK_NAME = ".lock"
_DIGEST = re.compile(r"[0-9a-f]{64}")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class OverStoreCap(Exception):
    """A content larger than the whole store may hold: it is not kept."""


class BlobMissing(Exception):
    """The blob is not in the store (evicted under the cap, or removed by hand)."""


class BlobDamaged(Exception):
    """The blob's bytes no longer hash to its name."""


@dataclass(frozen=True)
class _Blob:
    path: str
    digest: str
    size: int
    written: int


def is_digest(name: str) -> bool:
    """True for a hex SHA-256 (a journal line read back may hold anything)."""
    return _DIGEST.fullmatch(name) is not None


class CheckpointStore:
    """Content-addressed blobs under `root` (``<root>/<aa>/<sha256>``), at most
    `max_total_bytes` of them in all."""

    def __init__(self, root: Path, max_total_bytes: int = DEFAULT_MAX_STORE_BYTES) -> None:
        self.root = root
        self.max_total_bytes = max_total_bytes

    def path_of(self, digest: str) -> Path:
        """Where blob `digest` lives; ValueError unless `digest` is a hex SHA-256 (a crafted
        journal record could otherwise name any file, `..` or an absolute path)."""
        if not is_digest(digest):
            raise ValueError(f"not a SHA-256 digest: {digest!r}")
        return self.root / digest[:2] / digest

    def put(self, data: bytes) -> str:
        """Keep `data` (once per content) and mark it the most recently written; its SHA-256.
        Evicts the least recently written blobs to stay under the cap. Raises OverStoreCap
        when `data` alone is over it, OSError when the disk refuses."""
        if len(data) > self.max_total_bytes:
            raise OverStoreCap(
                f"it is {len(data)} bytes, over the checkpoint store's cap of "
                f"{self.max_total_bytes} bytes ([tools] max_checkpoint_store_bytes)"
            )
        digest = sha256(data)
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = os.open(
            self.root / LOCK_NAME,
            os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
            0o600,
        )
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            blobs = self._scan()
            newest = max((b.written for b in blobs), default=0)
            target = self.path_of(digest)
            if not self._holds(target, digest):
                self._write(target, data)
            stamp = max(time.time_ns(), newest + 1)
            os.utime(target, ns=(stamp, stamp))
            self._evict([b for b in blobs if b.digest != digest], len(data))
        finally:
            os.close(lock)  # releases the flock
        return digest

    def get(self, digest: str) -> bytes:
        """The blob `digest`. Raises BlobMissing, BlobDamaged, or OSError when unreadable."""
        path = self.path_of(digest)
        try:
            data = _read_regular_file(path)
        except _NotARegularFile as refused:
            raise BlobDamaged(f"its kept content {path} {refused}") from None
        except FileNotFoundError:
            raise BlobMissing(
                f"its content before is no longer in the checkpoint store ({path}): it was "
                "evicted to stay under [tools] max_checkpoint_store_bytes, or removed"
            ) from None
        if sha256(data) != digest:
            raise BlobDamaged(f"its kept content {path} is damaged (its SHA-256 does not match)")
        return data

    def kept_at(self, digest: str) -> str | None:
        """The path of blob `digest` when it is there and intact; None otherwise."""
        try:
            self.get(digest)
        except (BlobMissing, BlobDamaged, OSError):
            return None
        return str(self.path_of(digest))

    def total_bytes(self) -> int:
        """The bytes the blobs hold now."""
        return sum(b.size for b in self._scan())

    # --- under the lock -------------------------------------------------------------------

    def _holds(self, target: Path, digest: str) -> bool:
        try:
            return sha256(_read_regular_file(target)) == digest
        except (FileNotFoundError, _NotARegularFile):
            return False  # written again: the rename replaces whatever holds the name

    def _write(self, target: Path, data: bytes) -> None:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def _scan(self) -> list[_Blob]:
        """Every blob, and stale temporary files removed (no writer is inside the lock)."""
        blobs: list[_Blob] = []
        try:
            shards = list(os.scandir(self.root))
        except FileNotFoundError:
            return blobs
        for shard in shards:
            if len(shard.name) != 2 or not shard.is_dir(follow_symlinks=False):
                continue
            with os.scandir(shard.path) as entries:
                for entry in entries:
                    if entry.name.endswith(".tmp") and entry.name.startswith("."):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(entry.path)
                        continue
                    if not is_digest(entry.name) or not entry.is_file(follow_symlinks=False):
                        continue
                    info = entry.stat(follow_symlinks=False)
                    blobs.append(_Blob(entry.path, entry.name, info.st_size, info.st_mtime_ns))
        return blobs

    def _evict(self, others: list[_Blob], kept: int) -> None:
        """Remove the least recently written of `others` until they and the `kept` bytes
        just written fit under the cap."""
        total = kept + sum(b.size for b in others)
        for blob in sorted(others, key=lambda b: (b.written, b.digest)):
            if total <= self.max_total_bytes:
                break
            with contextlib.suppress(FileNotFoundError):
                os.unlink(blob.path)
            total -= blob.size


class _NotARegularFile(Exception):
    pass


def _read_regular_file(path: Path) -> bytes:
    """The bytes of `path` when it is a regular file. A link or a FIFO planted under a blob's
    name is refused without being followed or blocking on (O_NOFOLLOW, O_NONBLOCK): the data
    dir is the user's, but a blob's name must never read anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _NotARegularFile("is a link, not a kept file") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NotARegularFile("is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
