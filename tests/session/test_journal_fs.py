"""Tested in tests/session/test_journal_writer.py (one write per record, fsync),
tests/session/test_journal_store.py (the write lock across processes, journals without hard
links in tests/session/test_journal.py) and tests/session/test_disk_full.py (failing writes)."""
