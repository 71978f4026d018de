"""Tested in tests/protocol/test_protocol_v2.py: each wire type of acp_protocol/v2/tool_call.py
against the v2 schemas, with exactly the definition's members, round-tripped."""
