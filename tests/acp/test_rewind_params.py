"""Tested in tests/e2e/test_rewind_acp.py: the `_session/rewind` params, decoded through the real
process (the handler is tests/acp/test_rewind.py)."""
