"""The slash commands a session is shown (acp_server/acp/command_listing.py): the built-ins
first, then the custom commands by name; a file may not take a built-in's name, `/model`
included when no model is offered; a repository whose files cannot be read loses its commands,
never the session. Advertising and re-scanning through the real process:
tests/e2e/test_custom_commands_acp.py."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import NoReturn

import pytest

from acp_server.acp.command_listing import BUILTIN_NAMES, commands_update, scan_for
from acp_server.acp.mode_options import COMMANDS
from acp_server.tools import toolbox
from acp_server.tools.skill_places import SkillPlaces


def repository(root: Path, commands: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    folder = root / ".acp-server" / "commands"
    folder.mkdir(parents=True)
    for name, text in commands.items():
        (folder / f"{name}.md").write_text(text)
    return root


def test_every_builtin_name_is_reserved_even_model_when_no_model_is_offered() -> None:
    assert {"mode", "compact", "rewind", "model"} == BUILTIN_NAMES


def test_builtins_come_first_then_custom_commands_by_name(tmp_path: Path) -> None:
    repo = repository(
        tmp_path,
        {
            "review": "---\ndescription: Review the diff\nargument-hint: <path>\n---\nReview $1\n",
            "explain": "Explain the code\n",
            "model": "a file cannot take a built-in's name\n",
        },
    )
    scan = scan_for("s-1", str(repo), SkillPlaces())
    assert scan.clashes == ("model",)
    listed = commands_update((), scan).available_commands
    builtins = len(COMMANDS.available_commands)
    assert listed[:builtins] == COMMANDS.available_commands
    custom = [(c.name, c.description) for c in listed[builtins:]]
    assert custom == [("explain", "Explain the code"), ("review", "Review the diff")]
    assert listed[-1].input is not None and listed[-1].input.hint == "<path>"  # type: ignore[union-attr]


def test_a_scan_that_fails_leaves_a_note_and_no_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable(*args: object) -> NoReturn:
        raise OSError(errno.ELOOP, "Too many levels of symbolic links")

    monkeypatch.setattr(toolbox, "scan_commands", unreadable)
    scan = scan_for("s-1", str(tmp_path), SkillPlaces())
    assert scan.commands == {}
    assert scan.notes == (
        "custom commands were not read: [Errno 40] Too many levels of symbolic links",
    )
