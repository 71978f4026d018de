"""Tested in tests/e2e/test_one_dispatch_path.py (every method group routed, its errors through the
one exit) and tests/e2e/test_server_lifecycle.py (how a connection ends)."""
