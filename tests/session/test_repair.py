"""Tested in
tests/session/test_journal.py::test_an_open_turn_is_closed_once_with_outcome_unknown_results
and the repair tests beside it (an open turn closed once, background items ended, no calls)."""
