"""Text for humans is shown as it is, through the real process and the official SDK client: a
command's live output, tool call titles and permission titles carry terminal escapes (OSC 52
clipboard writes, screen clears), carriage returns and bidirectional overrides as visible
escapes, never raw; and the permission request holds the whole command, which its title cuts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    SANDBOXED,
    ToolClient,
    agent_session,
    call,
    prompt_and_then,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r")
"""What a terminal or an editor would interpret instead of showing."""


def texts(update: Any) -> str:
    return "".join(c.content.text for c in update.content or [] if c.type == "content")


def assert_shown_not_interpreted(text: str) -> None:
    for char in RAW:
        assert char not in text, f"{char!r} reached the client raw in {text!r}"


async def test_live_output_shows_escapes_instead_of_passing_them_raw(
    tmp_path: Path, ws: Path
) -> None:
    # OSC 52 (write the clipboard), a screen clear, a carriage return and a right-to-left
    # override, then the command waits until the test saw its live output.
    command = (
        r"printf 'first \033]52;c;ZXZpbA==\007 \033[2J x\rY \342\200\256gnp.exe\n'; "
        "while [ ! -e go ]; do sleep 0.05; done; echo second"
    )
    spec = script(tmp_path, call("bash", command=command), DONE)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:

        async def while_it_runs() -> None:
            with anyio.fail_after(20):
                while not any(
                    u.status == "in_progress" and "first" in texts(u)
                    for u in s.client.kinds("tool_call_update")
                ):
                    await s.client.wait_for_updates(len(s.client.updates) + 1)
            (ws / "go").touch()

        stop, _ = await prompt_and_then(s, while_it_runs)
    assert stop == "end_turn"
    live = [
        texts(u)
        for u in s.client.kinds("tool_call_update")
        if u.status == "in_progress" and texts(u)
    ]
    assert live
    for text in live:
        assert_shown_not_interpreted(text)
    assert live[0].startswith("first \\x1b]52;c;ZXZpbA==\\x07 \\x1b[2J x\\x0dY \\u202egnp.exe\n")


async def test_titles_escape_controls_and_the_permission_request_holds_the_whole_command(
    tmp_path: Path, ws: Path
) -> None:
    # A command whose first line clears the screen and reverses the text, and whose second
    # line, cut from every title, is the one that matters.
    command = "echo ok \x1b[2J\x1b]52;c;eA==\x07 \u202etxt.exe\nrm -rf ./precious  # line two"
    spec = script(tmp_path, call("bash", command=command), DONE)
    async with agent_session(ws, spec, client=ToolClient(["reject_once"]), env=SANDBOXED) as s:
        assert await s.prompt() == "end_turn"
    [(asked, _)] = s.client.permission_requests
    [announced] = s.client.kinds("tool_call")
    for title in (asked.title, announced.title):
        assert_shown_not_interpreted(title)
        assert "\n" not in title
        assert title.startswith("Run `echo ok \\x1b[2J\\x1b]52;c;eA==\\x07 \\u202etxt.exe")
        assert "precious" not in title  # the title is cut ...
    # ... and the request the user answers carries the whole command: as the call's input,
    # and as text shown with its escapes.
    assert asked.raw_input == {"command": command}
    shown = texts(asked)
    assert_shown_not_interpreted(shown)
    assert shown.endswith(
        "echo ok \\x1b[2J\\x1b]52;c;eA==\\x07 \\u202etxt.exe\nrm -rf ./precious  # line two"
    )
