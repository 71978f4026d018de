"""Tested in
tests/acp/v2/test_view.py::test_a_command_is_shown_on_a_display_terminal_escaped_with_its_exit_status
and
tests/acp/v2/test_view.py::test_a_call_the_cancel_stopped_ends_cancelled_and_its_terminal_exited."""
