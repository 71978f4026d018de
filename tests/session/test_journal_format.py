"""Tested in tests/session/test_journal.py (strict and forgiving loading: torn, damaged or
headerless files, unknown records, the legacy aborted outcome) and
tests/session/test_turn_end_strict.py."""
