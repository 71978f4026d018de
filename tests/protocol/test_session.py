"""Tested in tests/protocol/test_protocol_schema.py (each wire type of acp_protocol/session.py
against the official schema, round-tripped), tests/protocol/test_protocol_golden.py and
tests/protocol/test_protocol_leniency.py (the SDK's examples; decoding as lenient as ACP asks)."""
