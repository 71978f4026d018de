"""`session/list` and session titles: a session's title comes from its first prompt; the list
pages with an opaque cursor."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import msgspec

from acp_protocol.methods import V1
from acp_protocol.session import ListSessionsRequest, ListSessionsResponse, SessionInfo
from acp_server.rpc.dispatch import Route
from acp_server.rpc.peer import IncomingRequest
from acp_server.session.journal import JournalStore

from ..errors import invalid_params

LIST_PAGE_SIZE = 50
TITLE_LENGTH = 60


def derive_title(text: str | None) -> str | None:
    """A session title from its first prompt: the first non-blank line, shortened.

    Reads only as much of the text as the title needs: a 50 MB one-line prompt costs what a
    short one does (splitting it whole took seconds on every load).
    """
    if not text:
        return None
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        words = _leading_words(text, start, end)
        if words:
            return words if len(words) <= TITLE_LENGTH else words[: TITLE_LENGTH - 1] + "\u2026"
        start = end + 1
    return None


def _leading_words(text: str, start: int, end: int) -> str:
    """The words of `text[start:end]` joined by single spaces, cut once longer than the title:
    reads a growing window, so only the beginning of a long line is looked at."""
    window = TITLE_LENGTH * 4
    while True:
        stop = min(end, start + window)
        words = " ".join(text[start:stop].split())
        if stop == end or len(words) > TITLE_LENGTH:
            return words  # a word cut at `stop` lies beyond the title's length
        window *= 4


@dataclass
class SessionListing:
    """`session/list` of one connection: the journals in the store, newest first."""

    store: JournalStore

    def routes(self) -> list[Route[Any]]:
        """This group's methods."""
        return [Route(V1.session_list, self.list_sessions)]

    async def list_sessions(
        self, request: IncomingRequest, query: ListSessionsRequest
    ) -> ListSessionsResponse:
        start = _decode_cursor(query.cursor) if isinstance(query.cursor, str) else 0
        summaries = [
            s
            for s in self.store.list()
            if s.parent_session_id is None
            and (not isinstance(query.cwd, str) or s.cwd == query.cwd)
        ]
        summaries.sort(key=lambda s: (s.updated_at, s.session_id), reverse=True)
        page = summaries[start : start + LIST_PAGE_SIZE]
        end = start + len(page)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=s.session_id,
                    cwd=s.cwd,
                    additional_directories=s.additional_directories,
                    title=derive_title(s.first_prompt_text),
                    updated_at=s.updated_at,
                )
                for s in page
            ],
            next_cursor=_encode_cursor(end) if end < len(summaries) else msgspec.UNSET,
        )


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"v1:{offset}".encode()).decode()


def _decode_cursor(cursor: str) -> int:
    try:
        version, offset = base64.urlsafe_b64decode(cursor.encode()).decode().split(":")
        value = int(offset)
    except (ValueError, UnicodeDecodeError):
        value = -1
        version = ""
    if version != "v1" or value < 0:
        raise invalid_params(f"invalid cursor {cursor!r}")
    return value
