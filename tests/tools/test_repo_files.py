"""Tested in tests/tools/test_custom_commands.py (hostile command and skill files refused
without blocking) and tests/agent/test_instructions.py (links out of the repository)."""
