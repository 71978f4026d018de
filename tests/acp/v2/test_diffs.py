"""Tested in tests/acp/v2/test_view.py::test_a_file_change_is_a_v2_diff_whose_patch_applies: the
change list and a Git patch that applies."""
