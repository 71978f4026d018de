"""Tested in tests/session/test_journal.py: create, open, list and delete journals, one writer
per session, unsafe session ids refused."""
