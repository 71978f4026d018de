"""Tested in tests/agent/test_seams.py (a listener's `Block` and `Deny` stop the turn or the
call) and tests/extensions/test_hooks.py (a hook blocks a prompt, denies a call)."""
