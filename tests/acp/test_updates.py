"""Tested in tests/e2e/test_tool_updates.py (tool calls, diffs, plans, live and replayed) and
tests/acp/test_update_order.py (every update before the prompt's answer)."""
