"""Tested in tests/e2e/test_client_system_prompt.py: `systemPrompt` checked, journaled and kept
across load, resume and fork, through the real process."""
