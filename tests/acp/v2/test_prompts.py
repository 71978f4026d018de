"""Tested in tests/e2e/test_v2_turns.py (when each prompt is answered, held, withdrawn, refused
or failed prompts) and tests/e2e/test_v2_client.py (a turn and a cancel through the SDK's
client)."""
