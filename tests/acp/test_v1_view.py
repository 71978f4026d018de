"""Tested in tests/e2e/test_tool_updates.py, tests/e2e/test_permission_requests.py and
tests/e2e/test_child_sessions_acp.py: what a v1 client sees of a session's runtime."""
