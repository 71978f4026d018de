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
    ring = OutputRing(20)
    for n in range(100):
        ring.add(f"line {n:02}\n".encode())  # 8 bytes each
    assert ring.written == 800 and ring.lines == 100
    assert ring.written - ring.start == 20  # the limit, exactly
    assert ring.new_lines == 100
    read = ring.read(1000)
    # The cut fell inside line 97: what is left of it goes too; the text starts whole.
    assert read.text == "line 98\nline 99\n"
    assert (read.dropped, read.dropped_lines, read.left) == (784, 98, 0)
    assert ring.new_lines == 0


def test_a_cut_after_a_newline_keeps_the_next_line_whole() -> None:
    ring = OutputRing(16)
    for n in range(10):
        ring.add(f"line {n}\n".encode())  # 7 bytes each
    ring.add(b"x" * 2)  # the kept 16 bytes now start right after line 7
    first = ring.read(100)
    assert (first.text, first.dropped, first.dropped_lines) == ("line 8\nline 9\nxx", 56, 8)
    ring.add(b"\n" + b"y" * 15 + b"\n")  # the cut falls right after the newline
    read = ring.read(100)
    assert (read.text, read.dropped) == ("y" * 15 + "\n", 1)


def test_a_read_stops_at_its_bound_and_says_what_is_left() -> None:
    ring = OutputRing(1000)
    ring.add(b"a\n" * 100)
    first = ring.read(10)
    assert (first.text, first.left) == ("a\n" * 5, 190)
    assert ring.new_lines == 95
    assert ring.read(1000).text == "a\n" * 95


def test_no_character_is_split_by_the_end_of_a_read() -> None:
    ring = OutputRing(100)
    ring.add("üü".encode() + "€".encode()[:2])  # half of a character so far
    assert ring.read(100).text == "üü"
    ring.add("€".encode()[2:])
    assert ring.read(100).text == "€"
    ring.add("ééé".encode())
    assert ring.read(3).text == "é"  # the bound falls inside the second one


def test_a_cut_inside_a_character_of_an_endless_line_drops_its_orphaned_bytes() -> None:
    ring = OutputRing(5)
    ring.add("ab€€".encode())  # 8 bytes, no newline: the cut falls inside the first €
    read = ring.read(100)
    assert (read.text, read.dropped) == ("€", 5)


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        OutputRing(0)
