"""Tested in
tests/tools/test_permissions.py::test_check_mode_accepts_every_offered_mode_but_unknown_ones
and tests/acp/test_mode_options.py (the modes offered, and a mode not restored)."""
