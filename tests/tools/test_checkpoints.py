"""Tested in tests/agent/test_rewind.py (what the file tools' writes replaced, kept and put back,
hostile files left) and tests/tools/test_checkpoint_store.py (the content-addressed store)."""
