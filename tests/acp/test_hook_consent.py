"""Tested in tests/e2e/test_hooks_acp.py: workspace hooks ask once, again when their files change,
and a blocked prompt is told by the agent's own message, through the real process."""
