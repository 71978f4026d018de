"""Tested in tests/tools/builtin/test_ripgrep.py (rg's streamed output read within the caps,
hostile names and lines) and tests/tools/builtin/test_search.py (sorted, capped)."""
