"""Tested in tests/acp/test_update_order.py (updates before the answer) and
tests/e2e/test_notices.py (notices where the client opted in): the v1 presenter."""
