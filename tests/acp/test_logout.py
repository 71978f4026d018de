"""Tested in
tests/e2e/test_handshake_v2.py::test_logout_forgets_the_stored_key_and_prompts_then_answer_the_how_to
(v1's `logout` and v2's `auth/logout`, the config file before and after, then a prompt) and
tests/firstrun/test_stored_key.py (the edit of the config file)."""
