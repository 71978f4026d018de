"""Tested in tests/acp/v2/test_view.py: the view sends every update, state and notice of a v2
session through the presenter, each checked against the v2 schema."""
