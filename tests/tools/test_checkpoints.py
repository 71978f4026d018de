"""File checkpoints (acp_server/tools/checkpoints.py) on real files: what a write replaces is
kept in the store by digest (a new file has nothing to keep; a file over the cap, a directory, a
link or a FIFO is not kept and says why), and a rewind's plan puts back only files that still
hold the agent's write, removes files the agent created, leaves the rest with the reason, and
refuses a file edited between the plan and the restore. Rewinds through the agent:
tests/agent/test_rewind.py; the store: tests/tools/test_checkpoint_store.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_server.session.rewind import FileChange
from acp_server.tools.checkpoint_store import CheckpointStore, sha256
from acp_server.tools.checkpoints import Checkpoints, Restore, apply, plan_restore, undo
from acp_server.tools.workspace import PathChanged, PathRoots


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path.resolve() / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path.resolve() / "data" / "checkpoints")


def test_the_previous_content_is_kept_by_digest_and_a_new_file_has_none(
    root: Path, store: CheckpointStore
) -> None:
    (root / "a.py").write_bytes(b"old\n")
    kept = Checkpoints(store).capture(str(root / "a.py"), b"new\n")
    assert (kept.before, kept.after, kept.skipped) == (sha256(b"old\n"), sha256(b"new\n"), None)
    assert store.get(sha256(b"old\n")) == b"old\n"
    fresh = Checkpoints(store).capture(str(root / "b.py"), b"new\n")
    assert (fresh.before, fresh.skipped) == (None, None)


def test_what_cannot_be_kept_says_why(root: Path, store: CheckpointStore) -> None:
    (root / "big.bin").write_bytes(b"x" * 11)
    (root / "dir").mkdir()
    (root / "link").symlink_to(root / "big.bin")
    os.mkfifo(root / "fifo")
    checkpoints = Checkpoints(store, max_bytes=10)
    reasons = {
        name: checkpoints.capture(str(root / name), b"new").skipped
        for name in ("big.bin", "dir", "link", "fifo")
    }
    assert "over the checkpoint cap of 10 bytes ([tools] max_checkpoint_bytes)" in (
        reasons["big.bin"] or ""
    )
    assert reasons["dir"] == "it was a directory"
    assert reasons["link"] == (
        f"{root}/link changed while it was being opened (link is now a symbolic link); not followed"
    )
    assert reasons["fifo"] == (
        f"{root}/fifo is a FIFO (named pipe), not a regular file; only regular files are used"
    )


def change(path: Path, before: bytes | None, after: bytes) -> FileChange:
    return FileChange(
        str(path), sha256(before) if before is not None else None, sha256(after), None
    )


def test_a_rewind_puts_back_what_still_holds_the_agents_write_and_leaves_the_rest(
    root: Path, store: CheckpointStore
) -> None:
    store.put(b"before\n")
    (root / "edited.py").write_bytes(b"agent\n")
    (root / "created.py").write_bytes(b"agent\n")
    (root / "by_hand.py").write_bytes(b"the user's\n")
    (root / "same.py").write_bytes(b"before\n")
    changes = [
        change(root / "edited.py", b"before\n", b"agent\n"),
        change(root / "created.py", None, b"agent\n"),
        change(root / "by_hand.py", b"before\n", b"agent\n"),
        change(root / "same.py", b"before\n", b"agent\n"),
        change(root.parent / "outside.py", b"before\n", b"agent\n"),
        FileChange(str(root / "crafted.py"), "../../etc/passwd", sha256(b"agent\n"), None),
    ]
    restores, keeps, unchanged = plan_restore(changes, store, PathRoots(str(root)), "turn 2")
    assert restores == [
        Restore(str(root / "edited.py"), b"before\n", b"agent\n"),
        Restore(str(root / "created.py"), None, b"agent\n"),
    ]
    reasons = {Path(k.path).name: k.reason for k in keeps}
    assert reasons == {
        "by_hand.py": "it was changed outside the agent since turn 2",
        "outside.py": "it is outside the session's workspace roots",
        "crafted.py": "its checkpoint's name is not a SHA-256 digest",
    }
    assert unchanged == [str(root / "same.py")]
    for step in restores:
        apply(step)
    assert (root / "edited.py").read_bytes() == b"before\n"
    assert not (root / "created.py").exists()
    assert (root / "by_hand.py").read_bytes() == b"the user's\n"


def test_a_file_edited_after_the_plan_is_not_overwritten_and_undo_puts_the_write_back(
    root: Path, store: CheckpointStore
) -> None:
    store.put(b"before\n")
    for name in ("a.py", "b.py"):
        (root / name).write_bytes(b"agent\n")
    changes = [change(root / n, b"before\n", b"agent\n") for n in ("a.py", "b.py")]
    (first, second), _, _ = plan_restore(changes, store, PathRoots(str(root)), "turn 1")
    apply(first)
    (root / "b.py").write_bytes(b"edited meanwhile\n")
    with pytest.raises(PathChanged):
        apply(second)
    assert (root / "b.py").read_bytes() == b"edited meanwhile\n"
    assert undo([first]) == []
    assert (root / "a.py").read_bytes() == b"agent\n"
