"""Asking a provider, for setup and doctor: the model list, and one tiny request.

Each failure is a `ProbeFailure` with a kind setup can act on (ask for the URL, the key or the
model again) and a message fit for the terminal. Nothing here raises anything else for network
or server trouble: a user sees a sentence, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from acp_server.models.base import ModelError
from acp_server.models.providers import PROVIDERS, ProviderTables

if TYPE_CHECKING:
    import httpx

    from acp_server.models.base import ModelProvider

__all__ = ["ProbeFailure", "list_models", "model_answers"]

FailureKind = Literal["unreachable", "key", "model", "other"]

_LIST_LIMIT = 4 * 1024 * 1024
"""A model list longer than this is not read (a gateway's list is a few hundred KB)."""
_MAX_REDIRECTS = 5
"""Redirects on the same origin followed before the model list is given up."""


class ProbeFailure(Exception):
    """A provider check failed: `kind` says what to ask again, `message` what happened."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.message = message


def list_models(provider: str, base_url: str, key: str | None, timeout: float = 15.0) -> list[str]:
    """The model ids the server at `base_url` lists, in its order (where and how to ask are
    the registry row's of `provider`).

    Raises ProbeFailure: `unreachable` (no connection, bad URL), `key` (401/403), `other`.
    """
    import httpx

    row = PROVIDERS[provider]
    url = row.models_url(base_url)
    headers = {"accept": "application/json", **row.auth_headers(key)}
    try:
        with httpx.Client(timeout=timeout) as client:
            status, body = _get_within_origin(client, url, headers)
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        raise ProbeFailure(
            "unreachable", f"{base_url!r} is not an http:// or https:// URL ({exc})"
        ) from None
    except httpx.HTTPError as exc:
        detail = str(exc) or type(exc).__name__
        raise ProbeFailure(
            "unreachable",
            f"cannot reach {url} ({detail}). Check the URL and that the server is running.",
        ) from None
    return _model_ids(url, status, body, key_given=bool(key))


def _get_within_origin(
    client: httpx.Client, url: str, headers: Mapping[str, str]
) -> tuple[int, bytes]:
    """The status and body (at most `_LIST_LIMIT` bytes) of `GET url`, following redirects on
    the same origin only. The headers carry the key, and httpx drops only `Authorization` on
    the way to another host, not `x-api-key`; the agent's provider clients follow no redirect
    at all, so a server that sends its API elsewhere would fail there anyway: the user is told
    where it points instead."""
    request = client.build_request("GET", url, headers=headers)
    for _ in range(_MAX_REDIRECTS + 1):
        response = client.send(request, stream=True)
        try:
            following = response.next_request
            if following is None:
                body = b""
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > _LIST_LIMIT:
                        raise ProbeFailure("other", f"the model list at {url} is too long to read")
                return response.status_code, body
        finally:
            response.close()
        if _origin(following.url) != _origin(request.url):
            raise ProbeFailure(
                "unreachable",
                f"{request.url} redirects (HTTP {response.status_code}) to {following.url}, "
                "another server, which is not followed, so that the key goes nowhere else. If "
                "that is the provider's address, give it as the base URL.",
            )
        request = following
    raise ProbeFailure("other", f"{url} redirects more than {_MAX_REDIRECTS} times")


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port  # httpx gives no port when it is the default one


def _model_ids(url: str, status: int, body: bytes, *, key_given: bool) -> list[str]:
    from acp_server.models.http import error_excerpt

    if status in (401, 403):
        said = error_excerpt(body)
        problem = "rejected the key" if key_given else "needs a key"
        raise ProbeFailure("key", f"the server {problem} (HTTP {status}): {said}")
    if status != 200:
        raise ProbeFailure(
            "other", f"no model list at {url} (HTTP {status}): {error_excerpt(body)}"
        )
    import json

    try:
        data = json.loads(body)
    except ValueError:
        raise ProbeFailure("other", f"the answer of {url} is not JSON") from None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        entries = data.get("models") if isinstance(data, dict) else None  # Ollama's own form
    ids = [
        entry.get("id") or entry.get("name")
        for entry in entries or []
        if isinstance(entry, dict) and isinstance(entry.get("id") or entry.get("name"), str)
    ]
    return list(dict.fromkeys(str(i) for i in ids))


def model_answers(
    spec: str, providers: ProviderTables, environ: Mapping[str, str], timeout: float
) -> str:
    """Send `spec` one tiny request (through the same provider code the server uses); its
    answer's text (maybe empty).

    Raises ProbeFailure: `unreachable` (no connection, or no answer within `timeout` seconds),
    `key` (401/403), `model` (404, 400: the model is unknown), `other`.
    """
    import anyio

    from acp_server.models.base import ModelConfigError
    from acp_server.models.spec import load_model

    try:
        provider = load_model(spec, providers, environ=environ)
    except ModelConfigError as exc:
        raise ProbeFailure("other", str(exc)) from None
    try:
        return anyio.run(_ask, provider, timeout)
    except ModelError as exc:
        raise ProbeFailure(_kind(exc.code), exc.message) from None
    except TimeoutError:
        raise ProbeFailure(
            "unreachable", f"model unreachable: {spec} did not answer within {timeout:g} s"
        ) from None


def _kind(code: str | None) -> FailureKind:
    if code in ("connection", "bad_url", "timeout"):
        return "unreachable"
    if code in ("http_401", "http_403"):
        return "key"
    if code in ("http_404", "http_400", "http_422"):
        return "model"
    return "other"


async def _ask(provider: ModelProvider, limit_s: float) -> str:
    import anyio

    from acp_server.cancellation import TurnCancellation
    from acp_server.models.base import ModelRequest, TextDelta, TextPart, UserMessage
    from acp_server.models.http import close_provider

    request = ModelRequest(
        session_id="acp-server-probe",
        system_prompt="Answer in one word.",
        messages=[UserMessage(parts=[TextPart(text="Say OK.")])],
        tools=[],
        max_output_tokens=16,
    )
    text: list[str] = []
    try:
        with anyio.fail_after(limit_s):
            async for event in provider.stream(request, TurnCancellation().signal):
                if isinstance(event, TextDelta):
                    text.append(event.text)
    finally:
        await close_provider(provider)
    return "".join(text)
