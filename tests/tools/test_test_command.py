"""The project's test command: the config file's, else what the repository shows, read the
hostile-input way (links out of the workspace, FIFOs and huge directories give no command and
no hang)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from acp_server.models.base import ModelConfigError
from acp_server.tools.test_command import (
    SCAN_ENTRIES,
    AutoTestSettings,
    ProjectTestCommand,
    find_test_command,
    read_tests_table,
)

NONE = AutoTestSettings()


def found(root: Path) -> ProjectTestCommand | None:
    return find_test_command(root, NONE)


@pytest.mark.parametrize(
    ("files", "command", "source"),
    [
        ({"test_stats.py": ""}, "python -m pytest -q", "test_*.py files"),
        ({"stats_test.py": ""}, "python -m pytest -q", "test_*.py files"),
        ({"tests/test_a.py": ""}, "python -m pytest -q", "test_*.py files in tests/"),
        ({"conftest.py": ""}, "python -m pytest -q", "conftest.py"),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
            "python -m pytest -q",
            "the pytest section of pyproject.toml",
        ),
        ({"package.json": json.dumps({"scripts": {"test": "vitest"}})}, "npm test", None),
        (
            {"package.json": json.dumps({"scripts": {"test": "jest"}}), "yarn.lock": ""},
            "yarn test",
            None,
        ),
        ({"Makefile": "build:\n\tcc x.c\n\ntest: build\n\t./run\n"}, "make test", None),
        ({"Cargo.toml": "[package]\n"}, "cargo test", None),
        ({"go.mod": "module x\n"}, "go test ./...", None),
    ],
)
def test_the_repository_shows_its_test_command(
    tmp_path: Path, files: dict[str, str], command: str, source: str | None
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = found(tmp_path)
    assert result is not None and result.command == command
    if source is not None:
        assert result.source == source


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"stats.py": "x = 1\n", "README.md": "# x\n"},
        {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified"'}})},
        {"package.json": "{not json"},
        {"Makefile": "TEST := 1\nbuild:\n\tcc x.c\n"},
        {"pyproject.toml": "[project]\nname = 'x'\n"},
    ],
)
def test_no_command_where_the_repository_shows_none(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert found(tmp_path) is None


def test_the_config_file_wins(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("")
    settings = AutoTestSettings(command="tox -e py")
    assert find_test_command(tmp_path, settings) == ProjectTestCommand(
        "tox -e py", "the config file"
    )


def test_a_hostile_repository_gives_no_command_and_no_hang(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "package.json").write_text(json.dumps({"scripts": {"test": "steal"}}))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").symlink_to(outside / "package.json")  # links out: not read
    os.mkfifo(repo / "Makefile")  # a FIFO: never opened for blocking reads
    assert found(repo) is None


def test_a_huge_directory_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    for number in range(SCAN_ENTRIES + 50):
        (tmp_path / f"f{number:05}.txt").touch()
    (tmp_path / "test_zz.py").touch()  # may lie past the cap: found or not, it returns
    result = found(tmp_path)
    assert result is None or result.command == "python -m pytest -q"


def test_the_tests_table_is_read_and_checked(tmp_path: Path) -> None:
    def error(problem: str, key: str | None, table: str | None) -> Exception:
        return ModelConfigError(problem)

    assert read_tests_table({"command": "make check", "max_rounds": 0}, error) == AutoTestSettings(
        "make check", 0
    )
    with pytest.raises(ModelConfigError, match="`command` must be a non-empty string"):
        read_tests_table({"command": " "}, error)
    with pytest.raises(ModelConfigError, match="`max_rounds` must be an integer, 0 or more"):
        read_tests_table({"max_rounds": -1}, error)
    with pytest.raises(ModelConfigError, match="unknown key `rounds` in \\[tests\\]"):
        read_tests_table({"rounds": 2}, error)
