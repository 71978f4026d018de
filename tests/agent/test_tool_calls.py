"""Tested in tests/agent/test_loop.py (order, failures, unstarted calls balanced),
tests/agent/test_call_checks.py and tests/agent/test_cancel_in_task_group.py."""
