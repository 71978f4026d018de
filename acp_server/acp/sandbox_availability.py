"""Whether sandboxed mode is offered on this machine, and telling the client when it is not.

The command sandbox needs bubblewrap. It is probed once, at start-up while the bridge is
imported (`acp_server/server.py`), and the first session waits for the answer (`probe_sandbox`, in
acp/opening.py: a new session's answer depends on it); under --deterministic it is never
offered, so transcripts do not depend on the machine, and nobody is told (that is by request).
Where it cannot run, sandboxed mode is left out of the offered modes and the client is told why
once: a `notice` session update where the wire shows one (always on v2; on v1 if the client
opted in, `clientCapabilities.session.notices`), else a line on stderr. A session whose journal
(or `--mode`) says sandboxed starts in `default` instead, and that session's client is told
too.
"""

from __future__ import annotations

import logging

from .context import BridgeContext

log = logging.getLogger(__name__)


async def tell_about_sandbox(context: BridgeContext, session_id: str, fallback: str | None) -> None:
    """Say why sandboxed mode is not offered (once per connection), and why this session is
    not in the mode it was to start in (each time that happens)."""
    messages: list[tuple[str, str]] = []
    if context.sandbox_notice_due:
        context.sandbox_notice_due = False
        messages.append(("Sandboxed mode is not available", context.sandbox_missing))
    if fallback is not None:
        messages.append(("Switched to default mode", fallback))
    for title, description in messages:
        if not await context.presenter.notice(session_id, "warning", title, description):
            log.warning("%s: %s", title, description)
