"""The piped example works exactly as documented: the command line README.md and
docs/fixtures.md show is run as written, from the repository root, and prints
examples/pipe/session.out.jsonl byte for byte; its cancel stops both prompts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "pipe"


def documented_commands(page: Path) -> list[str]:
    """The shell lines of a page that pipe the example in."""
    blocks = re.findall(r"```sh\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    return [line for block in blocks for line in block.splitlines() if "examples/pipe/" in line]


def test_the_readme_and_the_fixtures_page_show_one_command() -> None:
    readme = documented_commands(REPO / "README.md")
    page = documented_commands(REPO / "docs" / "fixtures.md")
    assert len(readme) == 1 and readme == page


def test_the_documented_pipe_prints_the_expected_output(tmp_path: Path) -> None:
    if shutil.which("uv") is None:
        pytest.skip("the documented command runs `uv run`, and uv is not on PATH")
    [command] = documented_commands(REPO / "docs" / "fixtures.md")
    # mktemp's directory (the data dir) goes under tmp_path; nothing else of the environment
    # is changed, so a user's config dir is kept out by the command line itself.
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    expected = (EXAMPLE / "session.out.jsonl").read_text(encoding="utf-8")
    assert done.stdout == expected, done.stderr


def test_the_expected_output_shows_the_cancel_stopping_both_prompts() -> None:
    sent = [json.loads(line) for line in (EXAMPLE / "session.jsonl").read_text().splitlines()]
    prompts = {m["id"] for m in sent if m.get("method") == "session/prompt"}
    assert len(prompts) == 2 and sent[-1]["method"] == "session/cancel"
    answers = [
        json.loads(line) for line in (EXAMPLE / "session.out.jsonl").read_text().splitlines()
    ]
    stopped = {a["id"]: a["result"]["stopReason"] for a in answers if a.get("id") in prompts}
    assert stopped == dict.fromkeys(prompts, "cancelled")
