"""The one error exit (acp_server/rpc/error_exit.py): every error frame and every error an update
carries has its message and data redacted, nested data included, and keeps its code and id.
That every refused or failed call leaves through it: tests/rpc/test_dispatch.py and, through
the real process, tests/e2e/test_one_dispatch_path.py; that nothing else builds one:
tests/test_layers.py."""

from __future__ import annotations

import msgspec

from acp_server.redaction import REDACTED
from acp_server.rpc.error_exit import error_frame, error_object

KEY = "sk-proj-AbC123_xyz-789"


def test_an_error_frame_keeps_code_and_id_and_redacts_message_and_data() -> None:
    frame = error_frame(
        7,
        -32603,
        f"upstream refused key {KEY}",
        {"headers": {"authorization": f"Bearer {KEY}"}, "attempts": 2},
    )
    encoded = msgspec.json.encode(frame)
    assert KEY.encode() not in encoded
    decoded = msgspec.json.decode(encoded)
    assert decoded["jsonrpc"] == "2.0" and decoded["id"] == 7
    assert decoded["error"]["code"] == -32603
    assert decoded["error"]["message"] == f"upstream refused key sk-{REDACTED}"
    assert decoded["error"]["data"]["attempts"] == 2


def test_an_error_without_data_has_no_data_member() -> None:
    assert msgspec.json.decode(msgspec.json.encode(error_frame(None, -32700, "Parse error"))) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }


def test_an_error_an_update_carries_is_redacted_the_same_way() -> None:
    error = error_object(-32603, f"The turn failed: key {KEY}", [f"at https://u:{KEY}@host/v1"])
    assert KEY not in error.message and KEY not in str(error.data)
