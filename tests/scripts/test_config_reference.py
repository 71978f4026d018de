"""docs/configuration.md names exactly the keys the config file's reader takes, and is what
`scripts/config_reference.py` writes from the code today.

The page is one side; the other is the reader itself (`acp_server.config.load_config`): every
key the page names is recognised there (a wrong value for it is refused as a wrong value, not
as an unknown key), and every table's list of keys on the page is the list the reader gives
when it refuses an unknown key. The environment scan is tried on made-up code.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from acp_server.config import load_config
from acp_server.models.base import ModelConfigError

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "config_reference.py"
PAGE = REPO / "docs" / "configuration.md"
PROBE_PROVIDER = "openai"
PROBE_MODEL = "some-model"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclass looks its module up by name
    spec.loader.exec_module(module)
    return module


def page_tables() -> dict[str, list[str]]:
    """The keys of each table on the page: `""` is the top level."""
    tables: dict[str, list[str]] = {}
    current: str | None = None
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"## (?:\[(.+)\]|(Top level))", line)
        if heading:
            current = heading.group(1) or ""
            tables[current] = []
        elif line.startswith("## "):
            current = None
        elif current is not None and (row := re.match(r"\| `([^`]+)` \|", line)):
            tables[current].append(row.group(1))
    return tables


def concrete(table: str) -> str:
    """A page table's name with its placeholders filled in, as a file would write it."""
    return table.replace("NAME", PROBE_PROVIDER).replace('"MODEL"', f'"{PROBE_MODEL}"')


def refusal(tmp_path: Path, text: str) -> str:
    """The message load_config refuses `text` with."""
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelConfigError) as refused:
        load_config(path)
    return str(refused.value)


def listed(message: str) -> set[str]:
    """The keys an `unknown key` message says it expected (tables in brackets)."""
    expected = message.split("expected ", 1)[1]
    return {item.strip() for item in re.split(r", | or ", expected)}


def test_the_page_is_what_the_script_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_the_page_lists_every_table_the_file_takes(tmp_path: Path) -> None:
    tables = page_tables()
    top = listed(refusal(tmp_path, "not_a_key = 1\n"))
    assert {key for key in top if not key.startswith("[")} == set(tables[""])
    named = {key.strip("[]") for key in top if key.startswith("[")}
    assert named == {table for table in tables if table and "." not in table.replace(".NAME", "")}


def test_each_table_on_the_page_has_the_keys_its_reader_takes(tmp_path: Path) -> None:
    for table, keys in page_tables().items():
        if not table:
            continue
        message = refusal(tmp_path, f"[{concrete(table)}]\nnot_a_key = 1\n")
        assert "unknown key `not_a_key`" in message, message
        inner = {key for key in listed(message) if not key.startswith("[")}
        assert inner == set(keys), (table, message)


def test_every_key_on_the_page_is_recognised_by_the_reader(tmp_path: Path) -> None:
    for table, keys in page_tables().items():
        header = f"[{concrete(table)}]\n" if table else ""
        for key in keys:
            # A value no key takes: the reader must complain about the value, naming the key.
            message = refusal(tmp_path, f"{header}{key} = {{ probe = 1 }}\n")
            assert f"`{key}`" in message and "unknown" not in message, (table, key, message)


def test_a_provider_the_registry_lacks_is_refused(tmp_path: Path) -> None:
    message = refusal(tmp_path, "[providers.not_a_provider]\nbase_url = 'http://x'\n")
    assert "unknown provider" in message
    assert listed(message) == {"openai", "anthropic"}


SOURCE = """
import os
from acp_server.somewhere import TOKEN
NAMED = "NAMED_VARIABLE"
def f(environ, env):
    os.environ.get("FROM_GET")
    environ[NAMED]
    os.getenv("FROM_GETENV")
    _base(environ, "HANDED_OVER", (".config",))
    env[TOKEN] = "x"
    environ.get(unknown_name)
    settings.get("NOT_THE_ENVIRONMENT")
"""


def test_the_environment_scan_finds_reads_and_writes() -> None:
    found = set(
        script().variable_names(ast.parse(SOURCE), {"NAMED": "NAMED_VARIABLE", "TOKEN": "A_TOKEN"})
    )
    assert found == {
        ("FROM_GET", True),
        ("NAMED_VARIABLE", True),
        ("FROM_GETENV", True),
        ("HANDED_OVER", True),
        ("A_TOKEN", False),
    }


def test_the_page_names_the_variables_the_agent_reads() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for name in ("ACP_SERVER_MODEL", "ACP_SERVER_DETERMINISTIC", "OPENAI_API_KEY", "HOME"):
        assert f"| `{name}` |" in text
