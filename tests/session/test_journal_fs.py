"""Tested in tests/session/test_journal.py (one write per record, fsync, the write lock across
processes, journals without hard links) and tests/session/test_disk_full.py (failing writes)."""
