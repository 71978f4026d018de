"""Tested in tests/e2e/test_custom_commands_acp.py: custom commands advertised, refreshed, told
about clashes and expanded into the prompt, through the real process."""
