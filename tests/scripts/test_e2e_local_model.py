"""`scripts/e2e_local_model.py` without its hour of setup: the script starts and finds its
package, and the build progress is read from a log that grows the way a llama.cpp build's does
(a fake log written line by line, and a real child process that prints ninja's step counter
while `run_logged` watches it)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

from e2e_local.progress import LogProgress, run_logged  # noqa: E402  (needs scripts/ on sys.path)


def test_the_script_runs_as_a_file_and_imports_its_steps() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "e2e_local_model.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "--keep-server" in result.stdout and "llama.cpp's servers" in result.stdout


def append(log: Path, text: str) -> None:
    with log.open("a") as out:
        out.write(text)


def test_the_newest_ninja_counter_is_read_as_the_log_grows(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    progress = LogProgress(log)
    progress.poll()
    assert progress.describe() == ""  # the build has not opened its log yet

    append(log, "-- Configuring done\n[1/212] Building C object ggml/src/ggml.c.o\n")
    progress.poll()
    assert progress.describe() == "[1/212] 0%"

    append(log, "[2/212] Building C object a.o\nwarning: unused variable\n[57/212] Building CXX")
    progress.poll()
    assert progress.describe() == "[2/212] 0%"  # [57/212] is not a whole line yet

    append(log, " object llama.cpp.o\n")
    progress.poll()
    assert progress.describe() == "[57/212] 26%"

    append(log, "[212/212] Linking CXX executable bin/llama-server\n")
    progress.poll()
    assert (progress.done, progress.total) == (212, 212)
    assert progress.describe() == "[212/212] 100%"


def test_cmake_makefile_percentages_are_read_and_stray_brackets_are_not(tmp_path: Path) -> None:
    log = tmp_path / "pip.log"
    progress = LogProgress(log)
    append(log, "  [  3%] Building C object ggml.c.o\n")  # pip -v indents build output
    append(log, "[ 42%] Building CXX object llama.cpp.o\n")
    append(log, "error text with [7/9] in the middle and [ 99%] too\n")
    progress.poll()
    assert progress.describe() == "[ 42%]"


def test_run_logged_reports_a_real_growing_build_log_to_stderr(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    append(log, "an earlier build's line [9/9] Linking\n[9/9] Linking\n")
    fake_build = (
        "import sys, time\n"
        "for step in range(1, 6):\n"
        "    print(f'[{step}/5] Building CXX object step{step}.o', flush=True)\n"
        "    time.sleep(0.2)\n"
    )
    stderr = io.StringIO()
    status, seconds = run_logged(
        [sys.executable, "-c", fake_build], log, "llama-server", every=0.05, out=stderr
    )
    assert status == 0 and seconds > 0
    lines = stderr.getvalue().splitlines()
    assert len(lines) >= 2  # ticks while it ran, then the end
    assert all(line.startswith("    llama-server: ") for line in lines)
    assert "elapsed (running)" in lines[0]
    assert lines[-1].startswith("    llama-server: [5/5] 100%, ")
    assert lines[-1].endswith("elapsed (exit 0)")
    assert all("[9/9]" not in line for line in lines)  # an older build's lines are not read
    assert "[5/5] Building CXX object step5.o" in log.read_text()


def test_run_logged_says_the_log_size_when_the_output_has_no_counter(tmp_path: Path) -> None:
    log = tmp_path / "pip.log"
    stderr = io.StringIO()
    status, _ = run_logged(
        [sys.executable, "-c", "print('Collecting numpy'); raise SystemExit(3)"],
        log,
        "pip",
        out=stderr,
    )
    assert status == 3
    assert stderr.getvalue().startswith("    pip: log 0 KiB, ")
    assert stderr.getvalue().rstrip().endswith("(exit 3)")


def test_the_fix_repository_fails_until_its_one_character_bug_is_fixed(tmp_path: Path) -> None:
    from e2e_local import fix_task

    root = fix_task.make_repository(tmp_path / "repo")
    assert fix_task.tests_pass(root)[0] is False
    source = (root / "stats.py").read_text()
    fixed = source.replace("]) * 2", "]) / 2")
    assert sum(a != b for a, b in zip(source, fixed, strict=True)) == 1  # one character
    (root / "stats.py").write_text(fixed)
    passed, summary = fix_task.tests_pass(root)
    assert passed, summary


def test_no_setup_with_an_empty_cache_fails_at_once_and_fetches_nothing(tmp_path: Path) -> None:
    """What tests/e2e/test_local_model.py relies on: `--no-setup` builds, downloads and installs
    nothing; it names what is missing."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "e2e_local_model.py"), "--no-setup", "--fix-only"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 1
    assert "FAILED: llama-server is not at" in result.stderr
    cache = tmp_path / ".cache" / "acp-server-e2e"
    assert [p.name for p in cache.iterdir()] == ["logs"]
    assert list((cache / "logs").iterdir()) == []


def test_the_answer_is_the_models_text_after_its_last_tool_call() -> None:
    """Check (c) once passed on the JSON of an edit_file call written as text that held the
    number: the answer is only what the model wrote after its last call, without the agent's
    own marked notes."""
    from acp import text_block
    from acp.schema import AgentMessageChunk, ToolCallStart
    from e2e_local.checks import Client

    def chunk(text: str, agent: bool = False) -> AgentMessageChunk:
        meta = {"acp-server": {"origin": "agent"}} if agent else None
        return AgentMessageChunk(
            session_update="agent_message_chunk", content=text_block(text), field_meta=meta
        )

    client = Client()
    client.updates = [
        (1.0, chunk('{"name": "edit_file", "arguments": {"old_text": "7481"}}')),
        (1.5, chunk("(acp-server: the model wrote an edit_file call as text)", agent=True)),
        (2.0, ToolCallStart(session_update="tool_call", tool_call_id="c1", title="Edit")),
        (3.0, chunk("The number is ")),
        (3.1, chunk("(a note)", agent=True)),
        (3.2, chunk("7481.")),
    ]
    assert client.final_answer() == "The number is 7481."
    client.updates = client.updates[:3]
    assert client.final_answer() == ""
    [call] = client.tool_calls().values()
    assert call["seen_ms_after_last_chunk"] == 1000.0  # after the model's chunk, not the note


def test_a_text_call_is_timed_from_the_chunk_that_completed_its_name() -> None:
    """The issue's "a tool call seen within 1 s of its name": the chunk whose arrival makes the
    text hold a complete `"name": "..."` starts the clock; chunks after the call's `pending`
    frame show it was announced while the model still wrote it."""
    from acp import text_block
    from acp.schema import AgentMessageChunk, ToolCallProgress, ToolCallStart
    from e2e_local.checks import Client

    def chunk(text: str) -> AgentMessageChunk:
        return AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text))

    client = Client()
    client.updates = [
        (1.0, chunk('```json\n{"name": "ba')),
        (1.2, chunk('sh", "argu')),
        (
            1.25,
            ToolCallStart(
                session_update="tool_call", tool_call_id="c1", title="bash", status="pending"
            ),
        ),
        (1.5, chunk('ments": {"command": "ls"}}\n```')),
        (
            2.0,
            ToolCallProgress(
                session_update="tool_call_update", tool_call_id="c1", status="completed"
            ),
        ),
        (3.0, chunk('{"name": "read_file", "arguments": {"path": "a"}}')),
        (
            3.5,
            ToolCallStart(
                session_update="tool_call", tool_call_id="c2", title="read_file", status="completed"
            ),
        ),
    ]
    first, second = client.tool_calls().values()
    assert first["first_status"] == "pending"
    assert first["name_to_frame_ms"] == 50.0
    assert first["while_written"] is True
    assert first["status"] == "completed"
    # Announced only once its message ended: the clock ran from the chunk with its name.
    assert second["name_to_frame_ms"] == 500.0
    assert second["while_written"] is False


def test_the_loop_repository_never_says_ready(tmp_path: Path) -> None:
    """Check (d) needs a command the model cannot make succeed without changing files."""
    from e2e_local import loop_task

    root = loop_task.make_repository(tmp_path / "repo")
    for _ in range(2):
        result = subprocess.run(
            [sys.executable, loop_task.FILE], cwd=root, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 1
        assert "not ready yet" in result.stdout
