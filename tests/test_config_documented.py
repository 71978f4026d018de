"""The config file as documented stays true: every TOML block of README.md and docs/*.md and the
example in `acp_server/config.py`'s docstring is read by the server's own reader without an
error, and the values they show reach the owners' types."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

import acp_server.config
from acp_server.config import Config, load_config

REPO = Path(__file__).resolve().parents[1]


def readme_blocks() -> list[str]:
    """Every TOML block of the README and the docs pages."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    text = "".join(page.read_text(encoding="utf-8") for page in pages)
    blocks = re.findall(r"^( *)```toml\n(.*?)^\1```", text, re.S | re.M)
    return [textwrap.dedent(body) for _, body in blocks]


def docstring_example() -> str:
    doc = acp_server.config.__doc__ or ""
    start = doc.index("    default_model")
    end = doc.index("\n\n", doc.index("[skills]", start))
    return textwrap.dedent(doc[start:end])


def read(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_the_docs_have_the_config_blocks() -> None:
    tables = "".join(readme_blocks())
    for table in ("[providers.openai]", "[tools]", "[instructions]", "[sandbox]", "[web_fetch]"):
        assert table in tables, table


@pytest.mark.parametrize("index", range(len(readme_blocks())))
def test_every_documented_block_is_read(tmp_path: Path, index: int) -> None:
    read(tmp_path, readme_blocks()[index])


def test_the_docstring_example_is_read_into_the_owners_types(tmp_path: Path) -> None:
    config = read(tmp_path, docstring_example())
    assert config.default == "openai:gpt-4o-mini"
    assert config.turn.max_repeats == 3 and config.turn.subagents.max_seconds == 600.0
    openai = config.provider("openai")
    assert openai.read_timeout == 120.0
    qwen = openai.model("qwen2.5-coder-7b")
    assert (qwen.context_window, qwen.text_tool_calls, qwen.images) == (8192, True, True)
    assert config.tools.max_checkpoint_bytes == 4194304
    assert config.tools.max_checkpoint_store_bytes == 256 << 20
    assert config.instructions.file_names == ("AGENTS.md", "CLAUDE.md")
    assert config.sandbox.writable == ("~/.cache",)
    assert config.web_fetch.max_redirects == 5
    assert [str(p) for p in config.skills.repository] == [".agents/skills", ".claude/skills"]
