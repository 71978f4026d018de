"""Tested in tests/acp_fixture/test_runner.py (the `acp-fixture` console script: run, update,
output, exit statuses) and tests/acp_fixture/test_examples.py (every example replays)."""
