"""Which answers hold edits in the text edit formats, and what they say: whole-file listings
and search/replace blocks, with the paths as models write them, and the blocks that cannot be
read (said to the model as problems)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server.agent.edit_blocks import (
    MAX_BLOCKS,
    Listing,
    Problem,
    Replacement,
    block_call,
    creations_checked,
    edit_blocks,
)

GRADES = '"""Exam results."""\n\nPASS_MARK = 50\n\n\ndef passed(score):\n    return score >= 50\n'


@pytest.mark.parametrize(
    "path_line",
    [
        "grades.py",
        "**grades.py**",
        "`grades.py`",
        "# grades.py",
        "### `grades.py`",
        "grades.py:",
        "File: grades.py",
        "- `grades.py`",
        "1. grades.py",
        "src/pkg/grades.py",
        "/tmp/work/grades.py",
    ],
)
def test_a_listing_is_the_path_line_then_the_whole_file(path_line: str) -> None:
    expected = path_line.strip("#*` :-1.").removeprefix("File: ").strip("` ")
    answer = f"The bug is the comparison.\n\n{path_line}\n```python\n{GRADES}```\n\nDone."
    assert edit_blocks(answer, "whole_file") == [Listing(expected, GRADES)]


def test_the_path_may_stand_in_the_fence_info_string() -> None:
    answer = f"```python grades.py\n{GRADES}```\n"
    assert edit_blocks(answer, "whole_file") == [Listing("grades.py", GRADES)]


def test_several_listings_are_read_in_order_and_prose_blocks_beside_them_are_left() -> None:
    answer = (
        f"grades.py\n```\n{GRADES}```\n\nThen run:\n```sh\npython -m pytest\n```\n"
        "names.py\n~~~python\nX = 1\n~~~\n"
    )
    assert edit_blocks(answer, "whole_file") == [
        Listing("grades.py", GRADES),
        Listing("names.py", "X = 1\n"),
    ]


def test_a_fence_inside_the_listing_with_an_info_string_does_not_close_it() -> None:
    readme = "# Title\n\n```python\nprint(1)\n```\n\nEnd.\n"
    answer = f"README.md\n````markdown\n{readme}````\n"
    assert edit_blocks(answer, "whole_file") == [Listing("README.md", readme)]


def test_sentences_before_a_block_are_not_paths() -> None:
    answer = f"Here is the corrected file:\n```python\n{GRADES}```\n"
    [problem] = edit_blocks(answer, "whole_file")
    assert isinstance(problem, Problem) and problem.path is None
    assert "without a file path" in problem.problem


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (f"grades.py\n```python\n{GRADES}", "never ends"),
        ("grades.py\n```python\n\n```\n", "is empty"),
    ],
)
def test_a_block_that_cannot_be_read_is_a_problem(answer: str, reason: str) -> None:
    [problem] = edit_blocks(answer, "whole_file")
    assert isinstance(problem, Problem) and reason in problem.problem


def test_an_answer_without_blocks_holds_no_edits() -> None:
    assert edit_blocks("The tests pass now; nothing else to change.", "whole_file") == []
    assert edit_blocks("All done.", "search_replace") == []
    assert edit_blocks(f"grades.py\n```\n{GRADES}```\n", "tool_calls") == []


def test_a_search_replace_block_is_read_with_its_path() -> None:
    answer = (
        "Fix the comparison.\n\ngrades.py\n```python\n<<<<<<< SEARCH\n"
        "    return score > PASS_MARK\n=======\n    return score >= PASS_MARK\n"
        ">>>>>>> REPLACE\n```\n"
    )
    assert edit_blocks(answer, "search_replace") == [
        Replacement(
            "grades.py", "    return score > PASS_MARK\n", "    return score >= PASS_MARK\n"
        )
    ]


def test_search_replace_blocks_without_a_fence_and_without_a_second_path() -> None:
    answer = (
        "grades.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n\n"
        "<<<<<<<< SEARCH\nc\n========\n>>>>>>>> REPLACE\n"
        "```python names.py\n<<<<<<< SEARCH\n=======\nNEW = 1\n>>>>>>> REPLACE\n```\n"
    )
    assert edit_blocks(answer, "search_replace") == [
        Replacement("grades.py", "a\n", "b\n"),
        Replacement("grades.py", "c\n", ""),
        Replacement("names.py", "", "NEW = 1\n"),
    ]


def test_an_empty_search_creates_a_new_file_only(tmp_path: Path) -> None:
    (tmp_path / "grades.py").write_text(GRADES)
    answer = (
        "grades.py\n<<<<<<< SEARCH\n=======\nPASS_MARK = 40\n>>>>>>> REPLACE\n"
        "names.py\n<<<<<<< SEARCH\n=======\nNEW = 1\n>>>>>>> REPLACE\n"
        "names.py\n<<<<<<< SEARCH\n=======\nNEW = 2\n>>>>>>> REPLACE\n"
        "grades.py\n<<<<<<< SEARCH\nPASS_MARK = 50\n=======\nPASS_MARK = 40\n>>>>>>> REPLACE\n"
    )
    located = {"grades.py": str(tmp_path / "grades.py"), "names.py": str(tmp_path / "names.py")}
    overwrite, create, again, edit = creations_checked(
        edit_blocks(answer, "search_replace"), located.get
    )
    # An existing file, or one an earlier block creates: SEARCH must copy what changes.
    for problem, path in ((overwrite, "grades.py"), (again, "names.py")):
        assert isinstance(problem, Problem) and problem.path == path
        assert f"its SEARCH section is empty, but {path} exists" in problem.problem
        assert "an empty SEARCH only creates a new file" in problem.problem
    assert create == Replacement("names.py", "", "NEW = 1\n")
    assert block_call(create, "c1").name == "write_file"
    assert edit == Replacement("grades.py", "PASS_MARK = 50\n", "PASS_MARK = 40\n")
    call = block_call(overwrite, "c2")
    assert call.name == "edit_file" and call.arguments == {}
    assert call.arguments_error is not None and "(for grades.py)" in call.arguments_error


def test_an_empty_search_whose_path_cannot_be_located_is_left_to_the_write() -> None:
    blocks = edit_blocks(
        "/proc/x.py\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\n", "search_replace"
    )
    assert creations_checked(blocks, lambda path: None) == blocks


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("grades.py\n<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", "without its ======="),
        ("grades.py\n<<<<<<< SEARCH\na\n=======\nb\n", "without its ======="),
        ("Change this:\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "without a file path"),
    ],
)
def test_a_broken_search_replace_block_is_a_problem(answer: str, reason: str) -> None:
    [problem] = edit_blocks(answer, "search_replace")
    assert isinstance(problem, Problem) and reason in problem.problem


def test_blocks_past_the_cap_are_one_problem() -> None:
    answer = "".join(f"f{n}.py\n```\nx = {n}\n```\n" for n in range(MAX_BLOCKS + 3))
    found = edit_blocks(answer, "whole_file")
    assert len(found) == MAX_BLOCKS + 1
    assert found[-1] == Problem(
        None, f"3 more block(s) past the first {MAX_BLOCKS} were not applied"
    )


@pytest.mark.parametrize(
    "line",
    [
        "```" + " " * 20_000 + "```",
        "~" * 20_000 + "`",
        "```" + " \t" * 10_000 + "x" + " " * 20_000 + "`",
    ],
)
def test_a_long_line_of_fences_and_spaces_is_read_in_one_pass(line: str) -> None:
    """Lines like these once made the fence pattern backtrack in cubic time (hours at this
    length, on the event loop): that the test finishes is the check; the line is no fence."""
    answer = f"{line}\n\ngrades.py\n```python\n{GRADES}```\n"
    assert edit_blocks(answer, "whole_file") == [Listing("grades.py", GRADES)]
    blocks = edit_blocks(
        f"{line}\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "search_replace"
    )
    assert blocks == [
        Problem(None, "a search/replace block without a file path on the line before it")
    ]
