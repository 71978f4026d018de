"""The notice of a rewind (acp_server/acp/rewind_text.py), as `/rewind` answers it and
`session/load` replays it: what was restored (relative to the session's folder), what was not
and why, and what no rewind restores (bash commands, subagents), each list capped."""

from __future__ import annotations

from acp_server.acp.rewind_text import rewind_text
from acp_server.session import records as rec


def rewind(**fields: object) -> rec.Rewind:
    return rec.Rewind(rewind_id="r1", turn_id="t3", at="2026-12-06T00:00:00Z", **fields)  # type: ignore[arg-type]


def test_restored_files_are_shown_relative_to_the_session_folder_when_inside_it() -> None:
    text = rewind_text(rewind(restored=["/work/app/a.py", "/elsewhere/b.py"]), 3, "/work/app")
    assert text == ("Rewound the conversation to before turn 3.\nRestored: a.py, /elsewhere/b.py.")


def test_a_rewind_with_nothing_to_restore_says_so_and_an_unknown_turn_reads_a_turn() -> None:
    assert rewind_text(rewind(), None, "/work") == (
        "Rewound the conversation to before a turn.\nNo file needed restoring."
    )


def test_files_not_restored_say_why_and_where_their_content_was_kept() -> None:
    kept = [
        rec.RewindKept(path="/work/a.py", reason="edited by hand since", kept_at="/cp/a"),
        rec.RewindKept(path="/work/b.py", reason="now a FIFO"),
    ]
    lines = rewind_text(rewind(kept=kept), 2, "/work").splitlines()
    assert lines[1:] == [
        "Not restored: a.py: edited by hand since (its content before is kept at /cp/a).",
        "Not restored: b.py: now a FIFO.",
    ]


def test_commands_and_subagents_are_named_as_not_restored_on_one_line_each_and_capped() -> None:
    commands = ["make\nclean"] + [f"touch f{n}" for n in range(24)]
    lines = rewind_text(rewind(commands=commands, tasks=["refactor\nthe parser"]), 1, "/w")
    command_line, task_line = lines.splitlines()[2:]
    assert command_line.startswith(
        "Not restored: whatever these bash commands of the rewound turns changed"
    )
    assert "`make\\x0aclean`" in command_line and "`touch f18`" in command_line
    assert "`touch f19`" not in command_line and command_line.endswith(" and 5 more.")
    assert task_line == (
        "Not restored: what the subagents of the rewound turns changed: refactor\\x0athe parser."
    )
