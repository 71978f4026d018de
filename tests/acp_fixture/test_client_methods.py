"""The fixture runner's answers to the agent's requests, through jsonrpcserver's dispatch."""

from __future__ import annotations

from pathlib import Path

from acp_fixture.client_methods import answer, answered_by

OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def request(method: str, **params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def test_a_permission_is_answered_by_the_policy_in_force() -> None:
    ask = request("session/request_permission", sessionId="s", toolCall={}, options=OPTIONS)
    assert answer(ask, "allow_once") == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"outcome": {"outcome": "selected", "optionId": "yes"}},
    }
    assert answer(ask, "reject_once")["result"] == {
        "outcome": {"outcome": "selected", "optionId": "no"}
    }
    assert answer(ask, "cancelled")["result"] == {"outcome": {"outcome": "cancelled"}}
    assert answered_by("session/request_permission", "cancelled") == "permissions cancelled"


def test_files_are_read_by_line_and_limit_and_written(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("one\ntwo\nthree\n")
    whole = answer(request("fs/read_text_file", sessionId="s", path=str(path)), "allow_once")
    assert whole == {"jsonrpc": "2.0", "id": 7, "result": {"content": "one\ntwo\nthree\n"}}
    part = request("fs/read_text_file", sessionId="s", path=str(path), line=2, limit=1)
    assert answer(part, "allow_once")["result"] == {"content": "two\n"}
    write = request("fs/write_text_file", sessionId="s", path=str(path), content="new\n")
    assert answer(write, "allow_once")["result"] == {}
    assert path.read_text() == "new\n"
    assert answered_by("fs/write_text_file", "allow_once") == "fs"


def test_bad_requests_get_the_json_rpc_error_that_says_why(tmp_path: Path) -> None:
    relative = answer(request("fs/read_text_file", sessionId="s", path="notes.txt"), "allow_once")
    assert relative["error"] == {
        "code": -32602,
        "message": "Invalid params",
        "data": "path must be an absolute path",
    }
    missing = str(tmp_path / "missing.txt")
    gone = answer(request("fs/read_text_file", sessionId="s", path=missing), "allow_once")
    assert gone["error"]["code"] == -32002 and missing in gone["error"]["data"]
    no_path = answer(request("fs/read_text_file", sessionId="s"), "allow_once")
    assert no_path["error"]["code"] == -32602  # jsonrpcserver binds params by name
    unknown = answer(request("terminal/create", sessionId="s", command="ls"), "allow_once")
    assert unknown == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32601, "message": "Method not found", "data": "terminal/create"},
    }
    assert answered_by("terminal/create", "allow_once") == "runner"
