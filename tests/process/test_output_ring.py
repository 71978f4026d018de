"""The bounded output of a background item (acp_server/process/output_ring.py): the tail is
kept, the reader is told what was cut and how many lines it missed, and no character is split."""

from __future__ import annotations

import pytest

from acp_server.process.output_ring import OutputRing


def test_reads_return_what_is_new_once() -> None:
    ring = OutputRing(100)
    ring.add(b"one\ntwo\n")
    assert ring.new_lines == 2
    first = ring.read(1000)
    assert (first.text, first.dropped, first.left) == ("one\ntwo\n", 0, 0)
    assert ring.new_lines == 0 and ring.new_bytes == 0
    ring.add(b"three")
    assert ring.new_lines == 1  # an unfinished line counts
    assert ring.read(1000).text == "three"
    assert ring.read(1000).text == ""


def test_only_the_tail_is_kept_and_the_reader_is_told_what_it_missed() -> None:
    ring = OutputRing(10)
    for n in range(100):
        ring.add(f"line {n:02}\n".encode())  # 8 bytes each
    assert ring.written == 800 and ring.lines == 100
    assert ring.written - ring.start <= 10 + 8  # the limit, plus at most one chunk
    assert ring.new_lines == 100
    read = ring.read(1000)
    assert read.text == "line 98\nline 99\n"
    assert (read.dropped, read.dropped_lines, read.left) == (784, 98, 0)
    assert ring.new_lines == 0


def test_a_read_stops_at_its_bound_and_says_what_is_left() -> None:
    ring = OutputRing(1000)
    ring.add(b"a\n" * 100)
    first = ring.read(10)
    assert (first.text, first.left) == ("a\n" * 5, 190)
    assert ring.new_lines == 95
    assert ring.read(1000).text == "a\n" * 95


def test_no_character_is_split_by_the_cut_or_by_the_end_of_a_read() -> None:
    ring = OutputRing(4)
    ring.add("é".encode() * 3)  # one chunk of 6 bytes: kept whole
    ring.add("ü".encode() * 2)  # the first chunk is dropped
    ring.add("€".encode()[:2])  # half of a character so far
    read = ring.read(100)
    assert read.text == "üü" and read.dropped == 6
    ring.add("€".encode()[2:])
    assert ring.read(100).text == "€"


def test_a_cut_inside_a_character_drops_its_orphaned_bytes() -> None:
    # A pipe read may end inside a character; when the chunk before is dropped, the kept
    # data starts with the character's last bytes.
    ring = OutputRing(8)
    euro = "€".encode()
    ring.add(b"ab" + euro[:1])
    ring.add(euro[1:] + b"cd")
    ring.add(b"zzzz")
    read = ring.read(100)
    assert (read.text, read.dropped) == ("cdzzzz", 5)


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        OutputRing(0)
