"""Tested in tests/e2e/test_prompt.py, tests/acp/test_cancel_cause.py (the cause each stop passes)
and tests/acp/test_update_order.py (every update before the answer)."""
