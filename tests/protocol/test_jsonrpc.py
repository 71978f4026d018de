"""JSON-RPC 2.0 envelopes (acp_protocol/jsonrpc.py): the ids ACP accepts, incoming frames decoded
loosely so a bad field can still be answered with the id, and outgoing frames in wire order
that always carry `jsonrpc`. How the peer answers each bad frame:
tests/rpc/test_peer_framing.py; the error object against the schema:
tests/protocol/test_protocol_schema.py::test_jsonrpc_error_object_matches_error_def."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from acp_protocol.jsonrpc import (
    INT64_MAX,
    INT64_MIN,
    JSONRPC_VERSION,
    ErrorObject,
    ErrorResponse,
    Frame,
    OutgoingNotification,
    OutgoingRequest,
    ResultResponse,
    valid_request_id,
)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        (0, True),
        (INT64_MAX, True),
        (INT64_MIN, True),
        (INT64_MAX + 1, False),
        (INT64_MIN - 1, False),
        ("abc", True),
        ("", True),
        (None, True),
        (True, False),
        (1.0, False),
        ([1], False),
        ({"id": 1}, False),
    ],
)
def test_an_id_is_an_int64_a_string_or_null(value: Any, valid: bool) -> None:
    assert valid_request_id(value) is valid


def test_a_frame_with_wrong_typed_fields_still_decodes_with_its_id() -> None:
    frame = msgspec.json.decode(
        b'{"jsonrpc": 2, "id": 7, "method": ["x"], "params": {}}', type=Frame
    )
    assert (frame.jsonrpc, frame.id, frame.method) == (2, 7, ["x"])
    assert bytes(frame.params) == b"{}"  # type: ignore[arg-type]
    assert frame.result is msgspec.UNSET and frame.error is msgspec.UNSET


@pytest.mark.parametrize(
    ("frame", "encoded"),
    [
        (
            OutgoingRequest(JSONRPC_VERSION, 1, "fs/read_text_file", {"path": "/a"}),
            b'{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"path":"/a"}}',
        ),
        (
            OutgoingNotification(JSONRPC_VERSION, "session/update", {}),
            b'{"jsonrpc":"2.0","method":"session/update","params":{}}',
        ),
        (ResultResponse(JSONRPC_VERSION, "a", None), b'{"jsonrpc":"2.0","id":"a","result":null}'),
        (
            ErrorResponse(JSONRPC_VERSION, None, ErrorObject(-32700, "Parse error")),
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        ),
        (
            ErrorResponse(JSONRPC_VERSION, 3, ErrorObject(-32602, "Invalid params", None)),
            b'{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params",'
            b'"data":null}}',
        ),
    ],
)
def test_outgoing_frames_are_in_wire_order_and_data_only_when_given(
    frame: msgspec.Struct, encoded: bytes
) -> None:
    assert msgspec.json.encode(frame) == encoded
