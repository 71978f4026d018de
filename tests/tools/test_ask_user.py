"""Tested in tests/e2e/test_elicitation_acp.py (the form a client is asked, its answers and a
cancel) and tests/tools/test_toolbox.py (offered only where the client takes forms)."""
