"""Tested in tests/session/test_journal.py (appends, sync, flush in a worker thread, close) and
tests/session/test_disk_full.py (records wait in memory until the disk has room)."""
