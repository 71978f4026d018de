"""Which v1 clients are sent `notice` updates (acp_server/acp/notices.py): only those that
advertised `clientCapabilities.session.notices`. What each notice says and the fallback for the
others, through the real process: tests/e2e/test_notices.py."""

from __future__ import annotations

import msgspec
import pytest

from acp_protocol.initialize import ClientCapabilities
from acp_server.acp.notices import shows_notices


@pytest.mark.parametrize(
    ("capabilities", "shown"),
    [
        (b'{"session": {"notices": {}}}', True),
        (b'{"session": {"notices": null}}', False),
        (b'{"session": {}}', False),
        (b'{"session": null}', False),
        (b"{}", False),
    ],
)
def test_notices_go_only_to_a_client_that_opted_in(capabilities: bytes, shown: bool) -> None:
    assert shows_notices(msgspec.json.decode(capabilities, type=ClientCapabilities)) is shown
