"""The project's test command: the config file's `[tests] command`, else what the repository
shows. Read from a repository the user may not have written, the hostile-input way: a few
files, each through `read_capped` (no link out of the workspace, no FIFO, no file of another
user, at most `FILE_BYTES`), and at most `SCAN_ENTRIES` directory entries.

What is looked for, in this order (the first found wins):

- `package.json` whose `scripts.test` is not npm's placeholder: `npm test` (`yarn test` with a
  `yarn.lock`, `pnpm test` with a `pnpm-lock.yaml`);
- a `Makefile` with a `test:` target: `make test`;
- `Cargo.toml`: `cargo test`; `go.mod`: `go test ./...`;
- Python tests: pytest's configuration (`pytest.ini`, `[tool.pytest...]` in `pyproject.toml`,
  `[tool:pytest]` in `setup.cfg`, `conftest.py`) or `test_*.py` / `*_test.py` files at the top
  or in `tests/` or `test/`: `python -m pytest -q`.

Kept light (no runtime imports): the settings type is read with the config file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "AutoTestSettings",
    "ProjectTestCommand",
    "find_test_command",
    "read_tests_table",
]

DEFAULT_MAX_ROUNDS = 3
"""Test runs after the model's edits in one turn, at most (aider's `--auto-test` allows 3
reflections)."""
FILE_BYTES = 256 * 1024
SCAN_ENTRIES = 2000
_NPM_PLACEHOLDER = "no test specified"
_MAKE_TARGET = re.compile(r"^test\s*:(?!=)", re.MULTILINE)
_PYTEST_CONFIG = re.compile(r"^\[(tool\.pytest[.\w]*|tool:pytest|pytest)\]", re.MULTILINE)

ConfigError = Callable[[str, str | None, str | None], Exception]
"""`error(problem, key, table)`: the exception naming the config file and the line."""


@dataclass(frozen=True, slots=True)
class AutoTestSettings:
    """`[tests]`: the project's test command and how often the agent runs it in a turn."""

    command: str | None = None
    """The command that runs the project's tests (through the shell, in the working
    directory); unset: found in the repository (docs/local-model.md, "The test loop")."""
    max_rounds: int = DEFAULT_MAX_ROUNDS
    """Test runs after the model's edits in one turn, at most, where the model's `auto_test`
    is on: a failure is given back to the model until the last run."""


@dataclass(frozen=True, slots=True)
class ProjectTestCommand:
    """A test command and where it came from (shown to the user and the model)."""

    command: str
    source: str
    """`the config file`, `package.json`, `test_*.py files`, ..."""


def read_tests_table(values: Any, error: ConfigError) -> AutoTestSettings:
    """The config file's `[tests]` table; `error(problem, key, table)` makes the exception
    naming the file and line."""
    if not isinstance(values, dict):
        raise error("[tests] must be a table", "tests", None)
    settings: dict[str, Any] = {}
    for key, value in values.items():
        if key == "command":
            if not isinstance(value, str) or not value.strip():
                raise error("[tests] `command` must be a non-empty string", key, "tests")
            settings[key] = value
        elif key == "max_rounds":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise error("[tests] `max_rounds` must be an integer, 0 or more", key, "tests")
            settings[key] = value
        else:
            raise error(
                f"unknown key `{key}` in [tests]; expected command or max_rounds", key, "tests"
            )
    return AutoTestSettings(**settings)


def find_test_command(cwd: Path, settings: AutoTestSettings) -> ProjectTestCommand | None:
    """The configured command, else the one `cwd` shows (see the module docstring); None
    when there is neither."""
    if settings.command is not None:
        return ProjectTestCommand(settings.command, "the config file")
    try:
        return _detected(cwd)
    except (OSError, ValueError, RecursionError):  # a hostile repository: no command
        return None


def _read(cwd: Path, name: str) -> str | None:
    from acp_server.tools.repo_files import read_capped

    found = read_capped(cwd / name, cwd, FILE_BYTES)
    if found is None or found[2] is not None:
        return None
    return found[0]


def _entries(directory: Path) -> Iterator[str]:
    """The names in `directory`, at most `SCAN_ENTRIES` of them (none if it is not one)."""
    try:
        with os.scandir(directory) as scan:
            for count, entry in enumerate(scan):
                if count >= SCAN_ENTRIES:
                    return
                yield entry.name
    except OSError:
        return


def _detected(cwd: Path) -> ProjectTestCommand | None:
    names = set(_entries(cwd))
    if "package.json" in names:
        script = _npm_test_script(_read(cwd, "package.json"))
        if script:
            runner = (
                "yarn" if "yarn.lock" in names else "pnpm" if "pnpm-lock.yaml" in names else "npm"
            )
            return ProjectTestCommand(f"{runner} test", "package.json scripts.test")
    for makefile in ("Makefile", "makefile", "GNUmakefile"):
        if makefile in names and _MAKE_TARGET.search(_read(cwd, makefile) or ""):
            return ProjectTestCommand("make test", f"the test target of {makefile}")
    if "Cargo.toml" in names:
        return ProjectTestCommand("cargo test", "Cargo.toml")
    if "go.mod" in names:
        return ProjectTestCommand("go test ./...", "go.mod")
    python = _python_tests(cwd, names)
    return ProjectTestCommand("python -m pytest -q", python) if python else None


def _npm_test_script(text: str | None) -> str | None:
    try:
        package: Any = json.loads(text or "null")
    except ValueError:
        return None
    scripts = package.get("scripts") if isinstance(package, dict) else None
    test = scripts.get("test") if isinstance(scripts, Mapping) else None
    if not isinstance(test, str) or not test.strip() or _NPM_PLACEHOLDER in test:
        return None
    return test


def _python_tests(cwd: Path, names: set[str]) -> str | None:
    """Why the repository has Python tests (a config, test files), or None."""
    if "pytest.ini" in names or "conftest.py" in names:
        return "pytest.ini" if "pytest.ini" in names else "conftest.py"
    for config in ("pyproject.toml", "setup.cfg", "tox.ini"):
        if config in names and _PYTEST_CONFIG.search(_read(cwd, config) or ""):
            return f"the pytest section of {config}"
    if any(_is_test_file(name) for name in names):
        return "test_*.py files"
    for folder in ("tests", "test"):
        if folder in names and any(_is_test_file(name) for name in _entries(cwd / folder)):
            return f"test_*.py files in {folder}/"
    return None


def _is_test_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
