"""Tested in tests/e2e/test_v2_sessions.py (resume and what it refuses, close, config options,
fork, the per-item cancels) and tests/e2e/test_v2_client.py (resume with replay in a new
process, through the SDK's client)."""
