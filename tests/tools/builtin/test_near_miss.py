"""`edit_file`'s near-miss search is bounded work: a file of long, alike lines (a hostile or
generated file) is compared within a budget instead of holding the event loop for minutes."""

from __future__ import annotations

import difflib
import random

import pytest

from acp_server.tools.builtin import near_miss


class Counting(difflib.SequenceMatcher[str]):
    """A SequenceMatcher that counts the character pairs its ratios compare."""

    pairs = 0

    def ratio(self) -> float:
        Counting.pairs += len(self.a) * len(self.b)
        return super().ratio()


def test_the_similarity_scan_of_long_alike_lines_stays_within_a_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(near_miss.difflib, "SequenceMatcher", Counting)
    rng = random.Random(1)
    lines = ["".join(rng.choice("abcdefghij") for _ in range(400)) for _ in range(1000)]
    target = "".join(rng.choice("abcdefghij") for _ in range(400))
    said = near_miss.near_misses("\n".join(lines) + "\n", target)
    assert Counting.pairs <= 10_000_000  # unbounded: 1000 x 400 x 400 = 160,000,000
    assert "compared" in said  # what was cut is said


def test_a_long_old_text_is_matched_without_copying_it_at_every_line() -> None:
    content = "".join(f"line {i}\n" for i in range(20000))
    old_text = "".join(f"  line {i}\n" for i in range(5000, 15000))
    said = near_miss.near_misses(content, old_text)
    assert said.startswith("\nThe same text except for whitespace/indentation is at line 5001:")
