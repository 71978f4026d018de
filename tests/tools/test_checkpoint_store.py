"""The checkpoint store on real files: the total cap holds (least recently written evicted
first, what was just written never), writes are whole (a torn temporary file is never a blob
and is cleaned up), a damaged or evicted blob is reported, and two writers at once (threads of
one process, and two processes) leave the store under its cap with every blob intact."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from acp_server.tools.checkpoint_store import (
    BlobDamaged,
    BlobMissing,
    CheckpointStore,
    OverStoreCap,
    sha256,
)


def blob(n: int, size: int = 100) -> bytes:
    return (f"{n:06d}".encode() * size)[:size]


def blobs_in(store: CheckpointStore) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in store.root.glob("??/*")
        if p.is_file() and not p.name.startswith(".")
    }


def test_the_cap_holds_and_the_least_recently_written_go_first(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "cp", max_total_bytes=350)
    digests = [store.put(blob(n)) for n in range(3)]
    assert store.total_bytes() == 300
    store.put(blob(0))  # written again: now the most recent
    fourth = store.put(blob(3))
    assert store.total_bytes() <= 350
    assert set(blobs_in(store)) == {digests[0], digests[2], fourth}
    with pytest.raises(BlobMissing, match="evicted"):
        store.get(digests[1])
    for digest, data in blobs_in(store).items():
        assert sha256(data) == digest
    assert store.get(digests[0]) == blob(0)


def test_content_over_the_whole_cap_is_not_kept_and_evicts_nothing(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "cp", max_total_bytes=150)
    kept = store.put(blob(1))
    with pytest.raises(OverStoreCap, match=r"max_checkpoint_store_bytes"):
        store.put(blob(2, 151))
    assert set(blobs_in(store)) == {kept}


def test_a_torn_temporary_file_is_never_a_blob_and_is_removed(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "cp")
    data = blob(7)
    digest = sha256(data)
    # A writer that died mid-write left a temporary file beside the blob's place.
    torn = store.path_of(digest).with_name(f".{digest}.dead.tmp")
    torn.parent.mkdir(parents=True)
    torn.write_bytes(data[:10])
    with pytest.raises(BlobMissing):
        store.get(digest)
    assert store.put(blob(8)) == sha256(blob(8))
    assert not torn.exists()  # cleaned up under the lock
    assert store.put(data) == digest and store.get(digest) == data


def test_a_damaged_blob_is_detected_and_rewritten_by_the_next_put(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "cp")
    data = blob(3)
    digest = store.put(data)
    store.path_of(digest).write_bytes(b"flipped" + data[7:])
    with pytest.raises(BlobDamaged, match="damaged"):
        store.get(digest)
    assert store.kept_at(digest) is None
    store.put(data)  # the same content kept again replaces the damaged copy
    assert store.get(digest) == data and store.kept_at(digest) == str(store.path_of(digest))


def check_store(store: CheckpointStore) -> None:
    assert store.total_bytes() <= store.max_total_bytes
    assert not list(store.root.glob("??/.*.tmp"))
    for digest, data in blobs_in(store).items():
        assert sha256(data) == digest


def test_two_threads_writing_at_once_keep_the_cap(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "cp", max_total_bytes=2_000)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def writer(base: int) -> None:
        try:
            start.wait()
            for n in range(40):
                CheckpointStore(store.root, store.max_total_bytes).put(blob(base + n, 150))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k * 1000,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    check_store(store)
    assert len(blobs_in(store)) == 2_000 // 150


WRITER = """
import sys
from pathlib import Path
from acp_server.tools.checkpoint_store import CheckpointStore
store = CheckpointStore(Path(sys.argv[1]), 3000)
base = int(sys.argv[2])
for n in range(60):
    store.put((f"{base + n:06d}".encode() * 40)[:200])
"""


def test_two_processes_writing_at_once_keep_the_cap(tmp_path: Path) -> None:
    root = tmp_path / "cp"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(k * 1000)],
            env=env,
            stdout=subprocess.DEVNULL,
        )
        for k in range(2)
    ]
    assert [w.wait() for w in writers] == [0, 0]
    store = CheckpointStore(root, 3000)
    check_store(store)
    assert len(blobs_in(store)) == 3000 // 200


@pytest.mark.parametrize("planted", ["fifo", "link"])
def test_a_fifo_or_link_under_a_blobs_name_is_reported_without_blocking(
    tmp_path: Path, planted: str
) -> None:
    store = CheckpointStore(tmp_path / "cp", max_total_bytes=1000)
    digest = store.put(blob(1))
    target = store.path_of(digest)
    target.unlink()
    if planted == "fifo":
        os.mkfifo(target)
    else:
        secret = tmp_path / "elsewhere"
        secret.write_bytes(blob(1))  # the right bytes: still not read through a link
        target.symlink_to(secret)
    with pytest.raises(BlobDamaged, match="link" if planted == "link" else "not a regular"):
        store.get(digest)
    assert store.kept_at(digest) is None
    store.put(blob(1))  # writing that content again replaces what holds its name
    assert target.is_file() and not target.is_symlink()
    assert store.get(digest) == blob(1)
