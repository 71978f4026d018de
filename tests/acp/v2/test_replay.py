"""Tested in
tests/e2e/test_v2_client.py::test_a_resume_with_replay_in_a_new_process_shows_the_ids_seen_live:
a journal replayed as v2 updates under the ids the client saw live."""
