"""Tested in tests/e2e/test_rewind_acp.py: the `_session/rewind` params and answer, decoded and
encoded through the real process (the handler is tests/acp/test_rewind.py)."""
