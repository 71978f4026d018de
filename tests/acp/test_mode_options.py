"""What a session response says about modes, options and slash commands
(acp_server/acp/mode_options.py): sandboxed mode offered only where the sandbox runs, the
`model` option and `/model` only when models are offered, our slash commands recognised, and
the mode a session starts in with why it fell back. Switching them through the real process:
tests/e2e/test_modes.py."""

from __future__ import annotations

from acp_protocol.session_config import SessionConfigSelect
from acp_server.acp.mode_options import (
    COMMANDS,
    MODEL_COMMAND,
    available_commands,
    config_options,
    mode_state,
    offered_modes,
    slash_command,
    starting_mode,
)
from acp_server.tools.toolbox import MODES


def test_sandboxed_mode_is_offered_only_where_the_sandbox_runs() -> None:
    assert offered_modes(sandbox_available=True) == MODES
    assert [m.id for m in offered_modes(sandbox_available=False)] == [
        m.id for m in MODES if m.id != "sandboxed"
    ]


def test_the_mode_state_lists_the_offered_modes_and_the_current_one() -> None:
    state = mode_state("read_only", offered_modes(sandbox_available=False))
    assert state.current_mode_id == "read_only"
    assert "sandboxed" not in [m.id for m in state.available_modes]


def test_the_model_option_is_listed_only_with_a_model_and_models_to_offer() -> None:
    assert [o.id for o in config_options("default")] == ["mode"]
    assert [o.id for o in config_options("default", "echo", ())] == ["mode"]
    mode, model = config_options("accept_edits", "openai:a", ("openai:a", "openai:b"))
    assert isinstance(mode, SessionConfigSelect) and mode.current_value == "accept_edits"
    assert isinstance(model, SessionConfigSelect) and model.current_value == "openai:a"
    assert [o.value for o in model.options] == ["openai:a", "openai:b"]


def test_model_is_a_slash_command_only_when_models_are_offered() -> None:
    assert available_commands(()) == COMMANDS
    listed = available_commands(("openai:a",)).available_commands
    assert listed[-1] == MODEL_COMMAND
    assert slash_command("/model openai:a", ()) is None
    assert slash_command("/model openai:a", ("openai:a",)) == ("model", "openai:a")


def test_a_slash_command_is_ours_only_when_it_names_one_of_ours() -> None:
    assert slash_command("  /mode   read_only ", ()) == ("mode", "read_only")
    assert slash_command("/compact", ()) == ("compact", "")
    assert slash_command("/rewind 3", ()) == ("rewind", "3")
    assert slash_command("/review the diff", ()) is None
    assert slash_command("please /compact", ()) is None


def test_a_session_asking_for_sandboxed_mode_where_it_cannot_run_starts_in_default() -> None:
    assert starting_mode("sandboxed", "/usr/bin/bwrap", "") == ("sandboxed", None)
    mode, why = starting_mode("sandboxed", None, "bubblewrap is not installed")
    assert mode == "default"
    assert why is not None and why.endswith(": bubblewrap is not installed")


def test_a_mode_the_process_may_not_use_is_not_restored() -> None:
    assert starting_mode("accept_edits", None, "no bwrap") == ("accept_edits", None)
    mode, why = starting_mode("yolo", None, "no bwrap")
    assert mode == "default"
    assert why is not None and "the session's mode yolo was not restored" in why
