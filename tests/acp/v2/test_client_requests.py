"""Tested in tests/acp/v2/test_view.py::test_a_permission_wait_is_requires_action_then_running and
tests/acp/v2/test_view.py::test_a_cancel_while_waiting_goes_from_requires_action_to_idle_cancelled:
a question bracketed by the foreground state."""
