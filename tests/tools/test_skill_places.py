"""Tested in tests/test_config.py::test_skill_dirs_split_into_the_repositorys_and_the_users and
tests/tools/test_custom_commands.py (skills found in each place)."""
