"""A provider's facts are declared once, in its registry row (`acp_server/models/providers.py`):
no other module of `acp_server/` writes a row's key variable, base URL variable, server address,
models path or auth header as a string, and only the provider's own module writes its name. That
is what keeps "Add a provider" in docs/architecture.md at its file list, which this test reads too,
and a made-up row shows in the readers above the model layer (setup's first question, the no-model
message, the help); the model layer's readers: tests/models/test_providers.py.

Docstrings and comments may name the facts (they explain); code must read them from the row. The
checker is also run on a small made-up tree, so a broken walk cannot pass silently.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_server.acp.errors import no_model_message
from acp_server.cli import build_parser
from acp_server.firstrun.setup import kinds
from acp_server.models.providers import PROVIDERS, Provider
from tests.support.made_up_provider import MADE_UP

REPO = Path(__file__).resolve().parent.parent
REGISTRY = "acp_server/models/providers.py"
MAX_FILES = 3
"""Issue 36 item 6: at most 3 files for each kind of change."""


def facts(row: Provider) -> tuple[set[str], set[str]]:
    """(facts found inside any string, facts that count only as a whole string)."""
    anywhere = {row.key_variable, row.base_url_variable}
    for server in row.servers():
        anywhere.add(server.base_url.rstrip("/"))
        if server.hint:
            anywhere.add(server.hint)
    whole = {row.name, row.models_path, row.key_header}
    whole |= set(row.fixed_headers) | set(row.fixed_headers.values())
    if row.key_scheme:
        whole.add(row.key_scheme)
    return anywhere, whole


def _strings(tree: ast.AST) -> Iterator[ast.Constant]:
    """Every string constant of `tree` that is not a docstring (a string alone as a statement:
    a module's, class's, function's or attribute's)."""
    explained = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in explained
        ):
            yield node


def stray_facts(root: Path, rows: list[Provider]) -> list[str]:
    """`file:line: fact` for each fact of `rows` written outside the registry (a row's name is
    allowed in its own module too)."""
    found: list[str] = []
    for path in sorted((root / "acp_server").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative == REGISTRY:
            continue
        module = relative.removesuffix(".py").replace("/", ".")
        for node in _strings(ast.parse(path.read_text(), relative)):
            text = node.value
            for row in rows:
                anywhere, whole = facts(row)
                if module == row.module:
                    whole = whole - {row.name}
                hits = [fact for fact in anywhere if fact in text]
                hits += [fact for fact in whole if fact == text]
                found += [f"{relative}:{node.lineno}: {row.name} {fact!r}" for fact in hits]
    return found


def change_list(page: str, heading: str) -> list[str]:
    """The numbered items under `### heading` of the architecture page."""
    section = page.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\d+\. (.*)$", section, re.MULTILINE)


def test_no_provider_fact_is_written_outside_the_registry() -> None:
    assert stray_facts(REPO, list(PROVIDERS.values())) == []


def test_adding_a_provider_touches_the_listed_files_and_no_more() -> None:
    page = (REPO / "docs" / "architecture.md").read_text()
    items = change_list(page, "Add a provider")
    assert 1 <= len(items) <= MAX_FILES
    files = [re.match(r"`([^`]+)`", item) for item in items]
    assert all(files), items
    named = [match.group(1) for match in files if match]
    assert REGISTRY in named
    for name in named:  # each exists, for the providers we have
        for row in PROVIDERS.values():
            assert (REPO / name.replace("NAME", row.module.rsplit(".", 1)[-1])).is_file()


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_every_row_is_offered_by_setup_and_named_by_the_how_to_and_the_help(name: str) -> None:
    row = PROVIDERS[name]
    offered = [(kind.row, kind.server) for kind in kinds()]
    assert [(row, server) for server in row.servers()] == [o for o in offered if o[0] is row]
    assert f"{name}:MODEL with the key in {row.key_variable}" in no_model_message(None)
    help_text = " ".join(build_parser().format_help().split())
    assert f"{name}:MODEL, " in help_text and row.key_variable in help_text


def test_setup_offers_the_hosted_apis_by_label_then_the_compatible_servers() -> None:
    # The order setup always had: the rule keeps it for the rows of today.
    assert [kind.server.label for kind in kinds()] == [
        "Anthropic",
        "OpenAI",
        "An OpenAI-compatible server (llama.cpp, vLLM, Ollama, ...)",
    ]


def test_a_new_row_is_offered_by_setup_and_named_by_the_how_to_and_the_help(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(PROVIDERS, "madeup", MADE_UP)
    offered = [(kind.row.name, kind.server.label) for kind in kinds()]
    assert ("madeup", "Made Up") in offered
    assert ("madeup", "A Made-Up-compatible server") in offered[-2:]  # local servers last
    assert (
        "madeup:MODEL with the key in MADEUP_API_KEY "
        "(MADEUP_BASE_URL=http://127.0.0.1:9/ for a local server)"
    ) in no_model_message(None)
    help_text = " ".join(build_parser().format_help().split())
    assert "madeup:MODEL, script:PATH" in help_text and "MADEUP_API_KEY and every" in help_text


@pytest.mark.parametrize(
    ("source", "count"),
    [
        ('KEY = "OPENAI_API_KEY"\n', 1),
        ('url = f"{base}" + "https://api.openai.com/v1"\n', 1),
        ('MESSAGE = "set ANTHROPIC_BASE_URL=..."\n', 1),
        ('headers = {"anthropic-version": "2023-06-01"}\n', 2),
        ('if provider == "anthropic":\n    pass\n', 1),
        ('url = f"{base}/v1/models"\n', 1),
    ],
    ids=["key-variable", "url", "inside-a-message", "fixed-header", "name", "models-path"],
)
def test_the_checker_reports_a_fact_outside_the_registry(
    tmp_path: Path, source: str, count: int
) -> None:
    (tmp_path / "acp_server" / "firstrun").mkdir(parents=True)
    (tmp_path / "acp_server" / "firstrun" / "probe.py").write_text(source)
    assert len(stray_facts(tmp_path, list(PROVIDERS.values()))) == count


def test_the_checker_allows_docstrings_and_a_providers_name_in_its_own_module(
    tmp_path: Path,
) -> None:
    (tmp_path / "acp_server" / "models").mkdir(parents=True)
    (tmp_path / "acp_server" / "models" / "openai.py").write_text(
        '"""`OPENAI_API_KEY` is read."""\nROW = PROVIDERS["openai"]\nX = 1\n"""Says /models."""\n'
    )
    assert stray_facts(tmp_path, list(PROVIDERS.values())) == []
    (tmp_path / "acp_server" / "models" / "anthropic.py").write_text('NAME = "openai"\n')
    assert stray_facts(tmp_path, list(PROVIDERS.values())) == [
        "acp_server/models/anthropic.py:1: openai 'openai'"
    ]
