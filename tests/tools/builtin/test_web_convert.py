"""web_fetch's HTML conversion in a child process (acp_server/tools/builtin/web_convert.py),
through the tool and a real HTTP server on 127.0.0.1: a cancel during a conversion that
would never end stops it and the process is gone when the tool returns, a conversion past
its time limit gives the page's text instead, the fetch's deadline holds over it, a failing
converter is said (past its processor time too), the converter dies with an agent killed
with SIGKILL, and Markdown longer than the cap is cut with a note.

A stand-in converter (a small Python program taking the same arguments) makes "a conversion
that never ends" certain without reading a clock: only the kill can end it; it also outlives
an agent killed with SIGKILL unless the agent's watchdog stops it."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.process import ProcessRegistry
from acp_server.tools.base import ToolOutput
from acp_server.tools.builtin import web_convert
from acp_server.tools.builtin.web import WebFetch
from acp_server.tools.builtin.web_convert import HtmlConverter
from acp_server.tools.web_access import WebFetchSettings
from acp_server.tools.workspace import PathRoots
from tests.support.processes import alive
from tests.support.tool_call import a_call
from tests.support.turns import fresh_signal
from tests.support.web_server import Page, serve_pages

pytestmark = pytest.mark.anyio

PAGE = b"<h1>Title</h1><p>some words</p>"

STAND_IN = """
import os, signal, sys, time
mode = sys.argv[1]
with open(os.environ["PIDS"], "a") as pids:
    pids.write(f"{os.getpid()} {mode}\\n")
sys.stdin.buffer.read()
behaviour = os.environ["BEHAVIOUR_" + mode.upper()]
if behaviour == "hang":
    time.sleep(3600)
elif behaviour == "fail":
    sys.exit("the stand-in fails on purpose")
elif behaviour == "xcpu":  # what the kernel sends past RLIMIT_CPU
    os.kill(os.getpid(), signal.SIGXCPU)
else:
    sys.stdout.write(behaviour)
"""


def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, markdown: str, text: str) -> Path:
    """A converter program whose `markdown` and `text` passes hang, fail or print the given
    text; the file it appends `pid mode` lines to is returned."""
    program = tmp_path / "stand_in.py"
    program.write_text(STAND_IN)
    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS", str(pids))
    monkeypatch.setenv("BEHAVIOUR_MARKDOWN", markdown)
    monkeypatch.setenv("BEHAVIOUR_TEXT", text)
    return program


def tool(tmp_path: Path, program: Path | None, **settings: object) -> WebFetch:
    values: dict[str, object] = {"allow_private_addresses": True, **settings}
    converter = HtmlConverter(
        ProcessRegistry(), [sys.executable, str(program)] if program is not None else None
    )
    return WebFetch(
        PathRoots(str(tmp_path)),
        WebFetchSettings(**values),  # type: ignore[arg-type]
        converter=converter,
    )


async def fetch(web: WebFetch, url: str) -> ToolOutput:
    return await web.run({"url": url}, a_call(), fresh_signal())


def started(pids: Path) -> list[tuple[int, str]]:
    if not pids.exists():
        return []
    return [
        (int(pid), mode)
        for pid, mode in (line.split() for line in pids.read_text().split("\n") if line)
    ]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_cancel_during_a_conversion_stops_it_and_the_process_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = stand_in(tmp_path, monkeypatch, markdown="hang", text="hang")
    web = tool(tmp_path, program, timeout=3600)
    cancellation = TurnCancellation()
    outcome: list[BaseException] = []

    async def run(url: str) -> None:
        try:
            await web.run({"url": url}, a_call(), cancellation.signal)
        except TurnAborted as exc:
            outcome.append(exc)

    with serve_pages({"/page": Page(PAGE)}) as server:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, f"{server.url}/page")
                while not started(tmp_path / "pids"):  # noqa: ASYNC110 - another process's file
                    await anyio.sleep(0.01)
                cancellation.abort(UserCancel())
    # The conversion would have slept an hour (and the fetch's deadline is an hour): the
    # cancel ended it, and the converter was killed and reaped before the tool returned.
    assert len(outcome) == 1
    [(pid, mode)] = started(tmp_path / "pids")
    assert mode == "markdown" and gone(pid)


async def test_a_conversion_past_its_time_limit_gives_the_text_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = stand_in(tmp_path, monkeypatch, markdown="hang", text="Title\nsome words")
    monkeypatch.setattr(web_convert, "CONVERT_SECONDS", 0.5)
    with serve_pages({"/page": Page(PAGE)}) as server:
        output = await fetch(tool(tmp_path, program), f"{server.url}/page")
    assert not output.failed, output.text
    assert "Content-Type: text/html, as plain text" in output.text
    assert (
        "[the page could not be converted to Markdown (it took longer than 0.5 s); its text "
        "follows]" in output.text
    )
    assert output.text.endswith("Title\nsome words")
    runs = started(tmp_path / "pids")
    assert [mode for _, mode in runs] == ["markdown", "text"]
    assert all(gone(pid) for pid, _ in runs)


async def test_the_fetch_deadline_holds_over_the_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = stand_in(tmp_path, monkeypatch, markdown="hang", text="hang")
    with serve_pages({"/page": Page(PAGE)}) as server:
        output = await fetch(tool(tmp_path, program, timeout=1), f"{server.url}/page")
    assert output.failed and "timed out after 1 s" in output.text
    assert all(gone(pid) for pid, _ in started(tmp_path / "pids"))


async def test_a_converter_that_fails_twice_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = stand_in(tmp_path, monkeypatch, markdown="fail", text="fail")
    with serve_pages({"/page": Page(PAGE)}) as server:
        output = await fetch(tool(tmp_path, program), f"{server.url}/page")
    assert output.failed
    failure = "the converter failed with exit code 1: the stand-in fails on purpose"
    assert f"could not be converted to Markdown ({failure}), nor its text taken" in output.text


async def test_a_converter_past_its_processor_time_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = stand_in(tmp_path, monkeypatch, markdown="xcpu", text="Title\nsome words")
    with serve_pages({"/page": Page(PAGE)}) as server:
        output = await fetch(tool(tmp_path, program), f"{server.url}/page")
    assert not output.failed, output.text
    assert (
        "[the page could not be converted to Markdown (it needed more than its 10 s of "
        "processor time); its text follows]"
    ) in output.text


AGENT = """
import sys, anyio
from acp_server.cancellation import TurnCancellation
from acp_server.tools.builtin.web_convert import HtmlConverter

converter = HtmlConverter(None, [sys.executable, sys.argv[1]])
anyio.run(lambda: converter.convert("<p>x</p>", limit=1000, signal=TurnCancellation().signal))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the watchdog is Linux's")
async def test_the_converter_dies_with_an_agent_killed_by_sigkill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its process, like every command's, is watched by the agent's watchdog: before, a
    conversion went on to its end (or the hour of this stand-in) after the agent was gone."""
    program = stand_in(tmp_path, monkeypatch, markdown="hang", text="hang")
    agent = await anyio.open_process([sys.executable, "-c", AGENT, str(program)])
    async with agent:
        with anyio.fail_after(60):
            while not started(tmp_path / "pids"):  # noqa: ASYNC110 - another process's file
                await anyio.sleep(0.01)
        agent.kill()
    [(pid, _)] = started(tmp_path / "pids")
    try:
        with anyio.fail_after(60):
            while alive(pid):  # noqa: ASYNC110 - the watchdog stops it, in another process
                await anyio.sleep(0.02)
    finally:
        if alive(pid):  # what a failing run leaves
            os.kill(pid, signal.SIGKILL)


async def test_markdown_longer_than_the_cap_is_cut_with_a_note(tmp_path: Path) -> None:
    """A table of `colspan=1000` cells: 64 KiB of HTML become about 5 MB of Markdown."""
    row = b"<tr>" + b"<td colspan=1000>x</td>" * 20 + b"</tr>\n"
    table = b"<table>" + row * (60_000 // len(row)) + b"</table>"
    cap = 64 * 1024
    with serve_pages({"/table": Page(table)}) as server:
        output = await fetch(tool(tmp_path, None, max_bytes=cap), f"{server.url}/table")
    assert not output.failed, output.text[:500]
    assert "Content-Type: text/html, converted to Markdown" in output.text
    assert (
        f"[the page's Markdown is longer than the {cap} bytes limit ([web_fetch] max_bytes): "
        f"only its first {cap} bytes were kept, so the text below ends early]"
    ) in output.text
    assert f"more characters of {cap} not shown" in output.text  # what was kept: the cap
