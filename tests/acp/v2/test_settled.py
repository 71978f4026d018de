"""Tested in tests/acp/v2/test_view.py::test_a_failed_turn_is_idle_error_with_its_text_redacted and
tests/acp/v2/test_view.py::test_a_turn_not_saved_is_idle_error_and_a_blocked_one_refusal."""
