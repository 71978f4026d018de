"""Tested through the real process in tests/e2e/test_text_edits.py: the test run after a text
format's edits, shown and asked for
(`test_a_whole_file_answer_is_applied_shown_tested_and_rewound`), a failure given back to the
model (`test_a_failure_goes_back_to_the_model_and_its_next_answer_is_tested`), the rounds
capped (`test_the_test_runs_stop_at_max_rounds_and_the_last_failure_is_not_sent`), a failing
run the sandbox adds a note to
(`test_a_failing_run_with_the_sandbox_note_goes_back_to_the_model`), a cancel
during a run (`test_a_cancel_during_the_test_run_ends_the_turn_and_kills_the_command`), and a
tool-call model running none unless configured
(`test_a_tool_call_model_runs_no_tests_unless_configured_and_is_told_the_command`); when it
runs by default: tests/agent/test_edit_formats.py
(`test_auto_test_is_configured_else_on_for_text_formats_only`)."""
