"""Tested in tests/tools/builtin/test_shell.py (output, exit code, timeout, the turn signal on
the process group) and tests/tools/test_command_sandbox.py (how a call runs)."""
