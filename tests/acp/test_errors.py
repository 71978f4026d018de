"""The ACP errors several method groups answer (acp_server/acp/errors.py), each made in one
place: invalid params, a session not found, in use or unreadable, and a prompt without a model,
whose message says how to configure one with every provider of the registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_protocol import errors
from acp_server.acp.errors import (
    invalid_params,
    journal_refused,
    no_model,
    no_model_message,
    session_in_use,
    session_not_found,
)
from acp_server.models.providers import PROVIDERS
from acp_server.session.journal_format import JournalError, JournalLocked, JournalNotFound


def test_the_no_model_message_names_setup_the_file_it_writes_and_every_provider() -> None:
    message = no_model_message(Path("/home/u/.config/acp-server/config.toml"))
    assert "Run `acp-server setup`" in message
    assert "(it writes /home/u/.config/acp-server/config.toml)" in message
    assert "--model SPEC" in message and "ACP_SERVER_MODEL=SPEC" in message
    for provider in PROVIDERS.values():
        assert f"{provider.name}:MODEL with the key in {provider.key_variable}" in message
        if provider.compatible is not None:
            assert f"{provider.base_url_variable}={provider.compatible.base_url}" in message


def test_without_a_known_config_file_the_message_names_none() -> None:
    assert "(it writes" not in no_model_message(None)


def test_no_model_is_auth_required_with_the_how_to_in_the_message() -> None:
    error = no_model(None)
    assert error.code == errors.AUTH_REQUIRED
    assert error.message == f"Authentication required: {no_model_message(None)}"


def test_invalid_params_carries_what_is_wrong_in_data() -> None:
    error = invalid_params("cwd: must be an absolute path")
    assert (error.code, error.message, error.data) == (
        errors.INVALID_PARAMS,
        "Invalid params",
        "cwd: must be an absolute path",
    )


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (JournalNotFound("no journal"), "Session not found"),
        (JournalLocked("held by pid 7"), "Session is in use"),
        (JournalError("line 3: not JSON"), "Session cannot be loaded"),
    ],
)
def test_a_refused_journal_is_resource_not_found_saying_why(
    exc: JournalError, message: str
) -> None:
    error = journal_refused(exc, "s-1", "loaded")
    assert (error.code, error.message) == (errors.RESOURCE_NOT_FOUND, message)


def test_the_session_errors_name_the_session_or_the_holder() -> None:
    assert session_not_found("s-1").data == "no session 's-1'"
    assert session_in_use(JournalLocked("held by pid 7")).data == "held by pid 7"
    assert journal_refused(JournalError("line 3"), "s-1", "forked").message == (
        "Session cannot be forked"
    )
