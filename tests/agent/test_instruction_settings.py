"""The config file's `[instructions]` table: which project instruction files are read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_server.agent.instructions import InstructionSettings
from acp_server.config import load_config
from acp_server.models.base import ModelConfigError


def _load(tmp_path: Path, text: str) -> InstructionSettings:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path).instructions


def test_names_and_budget_are_read(tmp_path: Path) -> None:
    table = '[instructions]\nfiles = ["AGENTS.md", "CLAUDE.md"]\nmax_bytes = 4096\n'
    assert _load(tmp_path, table) == InstructionSettings(("AGENTS.md", "CLAUDE.md"), 4096)


def test_without_the_table_the_defaults_apply(tmp_path: Path) -> None:
    assert _load(tmp_path, 'default_model = "echo"\n') == InstructionSettings()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[instructions]\nfiles = 'AGENTS.md'\n", r", line 2: \[instructions\] `files` must be"),
        ("[instructions]\nfiles = ['../x.md']\n", r", line 2: \[instructions\] `files` must be"),
        ("[instructions]\nfiles = ['']\n", r", line 2: \[instructions\] `files` must be"),
        ("[instructions]\nmax_bytes = -1\n", r", line 2: \[instructions\] `max_bytes` must be"),
        ("[instructions]\nmax_bytes = true\n", r", line 2: \[instructions\] `max_bytes` must"),
        ("[instructions]\nfile = []\n", r", line 2: unknown key `file` in \[instructions\]"),
        ("instructions = 3\n", r", line 1: \[instructions\] must be a table"),
    ],
)
def test_bad_values_are_clear_errors(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelConfigError, match="^config file " + re.escape(str(path)) + problem):
        load_config(path)
