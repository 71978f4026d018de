"""Tested in tests/tools/builtin/test_web_convert.py (the child stopped by a cancel, its time
limit) and tests/tools/builtin/test_web_hostile.py (its memory on hostile pages)."""
