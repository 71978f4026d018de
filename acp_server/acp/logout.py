"""Logout, on both wires (v1's `logout`, advertised as `agentCapabilities.auth.logout`; v2's
`auth/logout`): forget the provider keys `acp-server setup` stored in the config file (the rest
of the file is kept: provider, base URL, model, `api_key_env`), and from then on answer every
prompt of the connection, and every login, with how to set up a model, as when none is
configured. Running turns are not stopped (the spec leaves it open; a turn already paid for
ends as it would). A key that comes from the environment or `--model` is not on disk: logout
says so, and the process keeps ignoring it until it restarts.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio.to_thread

from acp_protocol import errors
from acp_server.rpc.handlers import RpcError

from .context import BridgeContext

log = logging.getLogger(__name__)

__all__ = ["log_out"]


async def log_out(context: BridgeContext) -> dict[str, Any]:
    """Forget the stored keys and the model of this connection; the answer's `_meta`, which
    says what was forgotten (also said on stderr). Nothing changes when the file cannot be
    edited: the error says why and that the key is still there."""
    path = context.options.config_path
    forget = context.options.forget_keys
    removed: tuple[str, ...] = ()
    if forget is not None:
        try:
            removed = await anyio.to_thread.run_sync(forget)
        except (OSError, ValueError) as exc:
            raise RpcError(
                errors.INTERNAL_ERROR,
                f"Logout failed: the config file {path} could not be edited ({exc}); any key"
                " it holds is still there",
            ) from None
    context.logged_out = True
    if removed:
        said = (
            f"Forgot the key stored for {', '.join(removed)} in {path} (the rest of the file is"
            " kept). Prompts now answer how to set up a model; run `acp-server setup` to log in"
            " again."
        )
    else:
        said = (
            f"No key was stored in {path}: this agent's key comes from the environment or"
            " --model, which logout does not change. Until the agent restarts, prompts answer"
            " how to set up a model."
        )
    log.warning("logout: %s", said)
    file = str(path) if path is not None else None
    return {"acp-server": {"forgot": list(removed), "configFile": file, "message": said}}
