"""Tested in tests/acp/v2/test_view.py: every turn reads `running`, then `requires_action` while it
waits on the user, then `idle` with its stop reason, in order."""
