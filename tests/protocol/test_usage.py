"""Tested in tests/protocol/test_newer.py: the types of acp_protocol/usage.py, newer than the
vendored stable schema, against the unstable schema and the docs' examples, round-tripped."""
