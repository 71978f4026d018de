"""Tested in tests/agent/test_tool_images.py: which models take images (asked once, believed),
and the description and note a model that does not gets, on local servers."""
