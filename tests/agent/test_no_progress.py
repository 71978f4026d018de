"""No-progress detection: calls compared after normalization (paths resolved, defaults filled
in), results compared without their volatile parts, and runs of the same failure noted, then
stopped."""

from __future__ import annotations

from pathlib import Path

from acp_server.agent.call_checks import RepeatedCalls
from acp_server.agent.no_progress import FailedCalls, call_key, error_kind, stable_text
from acp_server.models.base import ToolCallRequest
from acp_server.tools.base import ToolOutput
from tests.support.tool_workspace import Workspace


def call(name: str, **arguments: object) -> ToolCallRequest:
    return ToolCallRequest(call_id="c", name=name, arguments=dict(arguments))


def test_paths_are_resolved_and_defaults_filled_in(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.file("f.txt", "x\n")
    read = ws.tools["read_file"]
    same = [
        call("read_file", path="f.txt"),
        call("read_file", path="./f.txt"),
        call("read_file", path=str(ws.root / "f.txt")),
        call("read_file", path="f.txt", offset=1),
        call("read_file", path="sub/../f.txt", offset=None),
    ]
    assert len({call_key(c, read) for c in same}) == 1
    assert call_key(call("read_file", path="f.txt", offset=2), read) != call_key(same[0], read)
    bash = ws.tools["bash"]
    assert call_key(call("bash", command="pytest  -q\n"), bash) == call_key(
        call("bash", command="pytest -q"), bash
    )


def test_durations_timestamps_and_pids_are_masked() -> None:
    one = "===== 1 failed, 2 passed in 0.12s =====\nstarted 2026-12-01T21:03:04Z pid 4242"
    two = "===== 1 failed, 2 passed in 0.31s =====\nstarted 2026-12-01T21:07:55Z pid 4399"
    assert stable_text(one) == stable_text(two)
    assert stable_text("1 failed") != stable_text("2 failed")


def test_the_repeat_limit_sees_through_paths_and_durations(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    read = ws.tools["read_file"]
    repeats = RepeatedCalls(3)
    for n, path in enumerate(["f.txt", "./f.txt", "f.txt", "./f.txt"]):
        output = repeats.check(
            call("read_file", path=path), ToolOutput(f"1 failed in 0.{n}2s"), read
        )
    assert repeats.stop_message is not None and "4 times" in repeats.stop_message
    assert "the turn was stopped here" in output.text


def test_error_kinds() -> None:
    assert error_kind("usage: pytest\nerror: unrecognized arguments\n[exit code: 4]") == (
        "exit code: 4"
    )
    assert error_kind("file not found: 'a.py'") == error_kind("file not found: 'b/c.py'")
    assert error_kind("file not found: 'a.py'") != error_kind("permission denied: 'a.py'")


def test_a_run_of_the_same_failure_is_noted_then_stopped() -> None:
    failures = FailedCalls(4)
    texts = []
    for n in range(4):
        output = failures.check(
            call("bash", command=f"pytest --cov=src{n}"),
            ToolOutput(f"error: unrecognized arguments: --cov=src{n}\n[exit code: 4]", failed=True),
        )
        texts.append(output.text)
    assert "Note from acp-server" not in texts[0]
    assert "2nd bash call in a row" in texts[1] and "3rd" in texts[2]
    assert "the turn was stopped here" in texts[3]
    assert failures.stop_message is not None
    assert "bash failed 4 times in a row" in failures.stop_message


def test_a_success_or_another_error_breaks_the_run() -> None:
    failures = FailedCalls(3)
    bad = ToolOutput("boom\n[exit code: 1]", failed=True)
    failures.check(call("bash", command="a"), bad)
    failures.check(call("bash", command="b"), bad)
    failures.check(call("read_file", path="x"), ToolOutput("fine"))
    failures.check(call("bash", command="c"), bad)
    failures.check(call("bash", command="d"), ToolOutput("boom\n[exit code: 2]", failed=True))
    failures.check(call("bash", command="e"), bad)
    assert failures.stop_message is None
