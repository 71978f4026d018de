"""Tested in tests/e2e/test_client_requests.py (fs and terminals),
tests/e2e/test_permission_requests.py and tests/e2e/test_elicitation_acp.py: the requests the
agent sends a real client."""
