"""`session/list` and session titles (acp_server/acp/methods/listing.py), on a real journal
store: a title is the first non-blank line of the first prompt, shortened, however long the
prompt; the list is newest first, leaves out subagents' sessions, filters by `cwd` and pages
with an opaque cursor that a client cannot forge. Through the real process:
tests/e2e/test_sessions.py."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from acp_protocol import errors
from acp_protocol.session import ListSessionsRequest
from acp_server.acp.methods import listing
from acp_server.acp.methods.listing import TITLE_LENGTH, SessionListing, derive_title
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest
from acp_server.session import records as rec
from acp_server.session.journal import JournalStore
from acp_server.session.journal_format import JournalHeader

pytestmark = pytest.mark.anyio


def request() -> IncomingRequest:
    """The request being answered (the listing reads only its params)."""
    return IncomingRequest(1, "session/list", None)


@pytest.mark.parametrize(
    ("prompt", "title"),
    [
        (None, None),
        ("", None),
        (" \n\t\n", None),
        ("\n\n  fix   the\tparser \nand more", "fix the parser"),
        ("x" * TITLE_LENGTH, "x" * TITLE_LENGTH),
        ("word " * 100, ("word " * 12)[: TITLE_LENGTH - 1] + "\u2026"),
    ],
)
def test_a_title_is_the_first_non_blank_line_shortened(prompt: str | None, title: str) -> None:
    assert derive_title(prompt) == title


def test_a_huge_one_line_prompt_gives_a_title_as_a_short_one_does() -> None:
    title = derive_title("a " * 2_500_000)
    assert title is not None and len(title) == TITLE_LENGTH and title.endswith("\u2026")


async def session(
    store: JournalStore, session_id: str, cwd: str, at: str, parent: str | None = None
) -> None:
    header = JournalHeader(session_id=session_id, cwd=cwd, created_at=at, parent_session_id=parent)
    journal = store.create(header)
    message = rec.UserMessage(
        message_id=f"m-{session_id}",
        content=[rec.TextPart(text=f"prompt of {session_id}")],
        origin="prompt",
        turn_id="t1",
        at=at,
    )
    journal.append(message)
    await journal.flush()
    journal.close()


async def sessions_of(tmp_path: Path) -> SessionListing:
    store = JournalStore(tmp_path)
    for n in range(5):
        await session(store, f"s{n}", "/work/a" if n % 2 else "/work/b", f"2026-12-0{n + 1}T00:00Z")
    await session(store, "child", "/work/a", "2026-12-09T00:00Z", parent="s1")
    return SessionListing(store)


async def test_the_list_is_newest_first_with_titles_and_without_subagents(
    tmp_path: Path,
) -> None:
    listed = await (await sessions_of(tmp_path)).list_sessions(request(), ListSessionsRequest())
    assert [s.session_id for s in listed.sessions] == ["s4", "s3", "s2", "s1", "s0"]
    assert listed.sessions[0].title == "prompt of s4"
    assert listed.sessions[0].updated_at == "2026-12-05T00:00Z"
    assert listed.next_cursor is msgspec.UNSET


async def test_the_list_filters_by_cwd(tmp_path: Path) -> None:
    query = ListSessionsRequest(cwd="/work/a")
    listed = await (await sessions_of(tmp_path)).list_sessions(request(), query)
    assert [s.session_id for s in listed.sessions] == ["s3", "s1"]


async def test_pages_follow_the_cursor_to_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "LIST_PAGE_SIZE", 2)
    sessions = await sessions_of(tmp_path)
    seen: list[str] = []
    query = ListSessionsRequest()
    while True:
        page = await sessions.list_sessions(request(), query)
        seen += [s.session_id for s in page.sessions]
        if not isinstance(page.next_cursor, str):
            break
        query = ListSessionsRequest(cursor=page.next_cursor)
    assert seen == ["s4", "s3", "s2", "s1", "s0"]


@pytest.mark.parametrize("cursor", ["", "not base64!", "djI6Mg==", "djE6LTE=", "djE6eA=="])
async def test_a_forged_cursor_is_invalid_params(tmp_path: Path, cursor: str) -> None:
    sessions = SessionListing(JournalStore(tmp_path))
    with pytest.raises(RpcError) as raised:
        await sessions.list_sessions(request(), ListSessionsRequest(cursor=cursor))
    assert raised.value.code == errors.INVALID_PARAMS
    assert raised.value.data == f"invalid cursor {cursor!r}"
