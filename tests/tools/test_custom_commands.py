"""Reading and expanding custom command files (the process-level behaviour is in
tests/e2e/test_custom_commands_acp.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server.tools.custom_commands import (
    CommandUnreadable,
    Shadowing,
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
    # The repository's file replaced the user's own: named for the user to be told.
    deep = sub / ".acp-server" / "commands" / "same.md"
    assert scan.shadowed == (Shadowing("same", user / "same.md", deep),)


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


def _skill_md(folder: Path, body: str = "Do it.\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {folder.name}\ndescription: The {folder.name} skill\n---\n{body}")
    return path


def test_hostile_skill_files_are_skipped_or_refused_without_blocking(tmp_path: Path) -> None:
    import os

    from acp_server.tools.custom_commands import MAX_BODY_BYTES, scan_skills

    repo = tmp_path / "repo"
    skills = repo / ".agents" / "skills"
    (repo / ".git").mkdir(parents=True)
    _skill_md(skills / "fine")
    (skills / "fifo").mkdir(parents=True)
    os.mkfifo(skills / "fifo" / "SKILL.md")  # no writer: a blocking open would hang
    secret = _skill_md(tmp_path / "outside" / "linked")
    (skills / "linked").mkdir()
    (skills / "linked" / "SKILL.md").symlink_to(secret)
    huge = _skill_md(skills / "huge", "x" * (MAX_BODY_BYTES + 1))
    scan = scan_skills(repo, None)
    assert set(scan.commands) == {"fine", "huge"}  # the scan reads only the front matter
    notes = "\n".join(scan.notes)
    assert "fifo" in notes and "linked" in notes and "outside" in notes
    with pytest.raises(CommandUnreadable, match="limited to"):
        expand_command(scan.commands["huge"], "")
    assert huge.exists()


def test_configured_places_replace_the_defaults_and_the_first_listed_wins(
    tmp_path: Path,
) -> None:
    from acp_server.tools.custom_commands import scan_skills
    from acp_server.tools.skill_places import SkillPlaces

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    _skill_md(repo / ".agents" / "skills" / "default-place")
    _skill_md(repo / "first" / "same", "from first\n")
    _skill_md(repo / "second" / "same", "from second\n")
    own = _skill_md(tmp_path / "mine" / "own").parent.parent
    places = SkillPlaces((Path("first"), Path("second")), (own,))
    scan = scan_skills(repo, None, places)
    assert set(scan.commands) == {"same", "own"}
    assert "from first" in expand_command(scan.commands["same"], "")
    assert scan.commands["own"].must_stay_in is None  # the user's own: not confined
