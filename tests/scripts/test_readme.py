"""The README's shape (issue 34): it starts with the two commands that set everything up on a
fresh machine, one running the tour and one the tests; it stays a first screen and a table of
contents, under 250 lines; and every page under docs/ is reachable from that table."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_first_block_is_the_two_commands() -> None:
    first = re.search(r"```sh\n(.*?)```", README, re.S)
    assert first is not None
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert commands == ["uv run acp-fixture run examples/tour/tour.jsonl", "uv run pytest"]
    assert README.index("```sh") < README.index("\n## ")  # before any section


def test_the_readme_stays_short() -> None:
    assert len(README.splitlines()) < 250


def test_every_docs_page_is_in_the_table_of_contents() -> None:
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)\)", README))
    pages = {p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")}
    assert pages - linked == set()
