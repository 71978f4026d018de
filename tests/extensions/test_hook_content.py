"""What a consent to workspace hooks is bound to (acp_server/extensions/hook_content.py): the
files a command names (its scripts, not what it writes to), a fingerprint of them and of the
hooks file, and the paths that changed. A file too large to hash, or one that must not be read
(a FIFO), is identified by its metadata without blocking. The consent asked again through the
hooks: tests/extensions/test_hooks.py::test_consent_holds_for_the_content_it_was_given_for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_server.extensions import hook_content
from acp_server.extensions.hook_content import changed, fingerprint, named_files


def test_a_command_names_its_scripts_but_not_its_output_files(tmp_path: Path) -> None:
    for name in ("lint.sh", "check.py", "out.txt", "in.txt"):
        (tmp_path / name).write_text("x")
    command = "./lint.sh && python check.py --fix > out.txt 2>&1 < in.txt; exit 0"
    assert named_files(command, str(tmp_path)) == [
        str(tmp_path / "lint.sh"),
        str(tmp_path / "check.py"),
        str(tmp_path / "in.txt"),
    ]
    before = fingerprint([], [command], str(tmp_path))
    (tmp_path / "check.py").write_text("y")
    assert changed(before, fingerprint([], [command], str(tmp_path))) == [
        str(tmp_path / "check.py")
    ]


def test_a_file_over_the_limit_and_a_fifo_are_identified_by_their_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hook_content, "DIGEST_LIMIT", 4)
    (tmp_path / "big.bin").write_bytes(b"0123456789")
    (tmp_path / "small.sh").write_text("ok")
    os.mkfifo(tmp_path / "pipe")
    found = fingerprint([str(tmp_path / "pipe")], ["./big.bin ./small.sh"], str(tmp_path))
    info = os.stat(tmp_path / "big.bin")
    assert found[str(tmp_path / "big.bin")] == (
        f"stat:{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"
    )
    assert found[str(tmp_path / "small.sh")].startswith("sha256:")
    assert found[str(tmp_path / "pipe")].startswith("stat:")  # never opened for reading


def test_a_hooks_file_that_is_gone_and_files_that_come_or_go_count_as_changed(
    tmp_path: Path,
) -> None:
    hooks = str(tmp_path / "hooks.json")
    before = fingerprint([hooks], [], str(tmp_path))
    assert before == {hooks: "missing: No such file or directory"}
    (tmp_path / "hooks.json").write_text("{}")
    assert changed(before, fingerprint([hooks], [], str(tmp_path))) == [hooks]
    assert changed({"a": "x"}, {"b": "x"}) == ["a", "b"]
    assert changed({"a": "x"}, {"a": "x"}) == []
