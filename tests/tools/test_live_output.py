"""Tested in tests/e2e/test_live_commands.py: a client terminal embedded at once, and a local
command's output on its tool call before the command ends."""
