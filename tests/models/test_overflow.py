"""Tested in tests/models/test_limits.py::test_every_known_shape_is_recognised_with_its_sizes and
the context-exceeded tests after it: every server's shape, as a plain answer and mid-stream."""
