"""Tested in tests/e2e/test_skills_acp.py (a skill loaded by name through the real process) and
tests/tools/test_toolbox.py (offered once a skill exists)."""
