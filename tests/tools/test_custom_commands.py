"""Reading and expanding custom command files (the process-level behaviour is in
tests/e2e/test_custom_commands_acp.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server.tools.custom_commands import (
    CommandUnreadable,
    expand_command,
    scan_commands,
    split_front_matter,
)


def test_front_matter_is_flat_keys_and_an_unclosed_block_is_body() -> None:
    meta, body = split_front_matter("---\ndescription: 'Quoted: yes'\n  nested: no\n---\nBody\n")
    assert meta == {"description": "Quoted: yes"} and body == "Body\n"
    assert split_front_matter("---\ndescription: x\nno end\n") == (
        {},
        "---\ndescription: x\nno end\n",
    )


def test_user_then_root_then_deeper_and_builtins_reserved(tmp_path: Path) -> None:
    user = tmp_path / "user"
    repo = tmp_path / "repo"
    sub = repo / "sub"
    (repo / ".git").mkdir(parents=True)
    for directory, text in ((user, "user"), (repo, "root"), (sub, "deep")):
        place = directory if directory == user else directory / ".acp-server" / "commands"
        place.mkdir(parents=True, exist_ok=True)
        (place / "same.md").write_text(f"from {text}\n")
    (user / "compact.md").write_text("shadowed\n")
    scan = scan_commands(sub, user, {"compact"})
    assert set(scan.commands) == {"same"}
    assert scan.commands["same"].description == "from deep"
    assert scan.clashes == ("compact",)


def test_an_unclosed_quote_falls_back_to_words_and_a_vanished_file_is_said(
    tmp_path: Path,
) -> None:
    (tmp_path / "c.md").write_text("A=$1 B=$2 C=$3 ALL=$ARGUMENTS\n")
    scan = scan_commands(tmp_path / "nowhere", tmp_path, ())
    command = scan.commands["c"]
    assert expand_command(command, "'open x") == "A='open B=x C= ALL='open x"
    (tmp_path / "c.md").unlink()
    with pytest.raises(CommandUnreadable, match="is gone"):
        expand_command(command, "")
