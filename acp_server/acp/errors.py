"""The ACP errors more than one method group answers, each made in one place: invalid params,
a session that is not found, in use or unreadable, and a prompt without a model.

Handlers raise these; the router answers them through its one redacting exit
(acp_server/rpc/dispatch.py). Imports no runtime: the handshake and `session/new` use it before
the runtime is loaded (the provider registry is a small table the CLI has already loaded).
"""

from __future__ import annotations

from pathlib import Path

from acp_protocol import errors
from acp_server.models.providers import PROVIDERS, Provider
from acp_server.rpc.handlers import RpcError
from acp_server.session.journal_format import JournalError, JournalLocked, JournalNotFound


def no_model_message(config_path: Path | None) -> str:
    """How to configure a model: `setup` (which writes `config_path`, the file the server
    reads; None when not known), `--model` or the model variable, and each provider of the
    registry with its key variable. Said where users look: the prompt error's `message`
    (clients show it, not `data`) and the auth method's description."""
    written = f" (it writes {config_path})" if config_path is not None else ""
    specs = [_spec_hint(row) for row in PROVIDERS.values()]
    return (
        "No model is configured. Run `acp-server setup` in a terminal to choose a provider, "
        f"key and model{written}, or add --model SPEC to the agent's args, or "
        "ACP_SERVER_MODEL=SPEC to its env, in your client's agent settings. SPEC is "
        f"{', '.join(specs)}, or echo to try the protocol. `acp-server doctor` checks the "
        "result. See docs/editors.md."
    )


def _spec_hint(row: Provider) -> str:
    hint = f"{row.name}:MODEL with the key in {row.key_variable}"
    if row.compatible is not None:
        local = f"{row.base_url_variable}={row.compatible.base_url}"
        hint += f" ({local} for a local server)"
    return hint


def invalid_params(detail: str) -> RpcError:
    """-32602 with what is wrong in `data`."""
    return RpcError(errors.INVALID_PARAMS, "Invalid params", detail)


def no_model(config_path: Path | None) -> RpcError:
    """The answer to a call that needs a model when none is configured: how to configure one
    (`config_path`: the config file the server reads)."""
    message = no_model_message(config_path)
    return RpcError(errors.AUTH_REQUIRED, f"Authentication required: {message}")


def session_not_found(session_id: str) -> RpcError:
    """The -32002 error of a session id that names no session."""
    return RpcError(errors.RESOURCE_NOT_FOUND, "Session not found", f"no session {session_id!r}")


def session_in_use(exc: JournalLocked) -> RpcError:
    """-32002 for a session whose journal another process holds."""
    return RpcError(errors.RESOURCE_NOT_FOUND, "Session is in use", str(exc))


def journal_refused(exc: JournalError, session_id: str, action: str) -> RpcError:
    """A journal that cannot be opened to `action` ("loaded", "forked") the session: not found,
    in use, or unreadable (corrupt, or another journal error), each -32002."""
    if isinstance(exc, JournalNotFound):
        return session_not_found(session_id)
    if isinstance(exc, JournalLocked):
        return session_in_use(exc)
    return RpcError(errors.RESOURCE_NOT_FOUND, f"Session cannot be {action}", str(exc))
