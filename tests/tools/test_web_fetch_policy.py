"""The permission policy with the real `web_fetch` tool (acp_server/tools/permissions.py,
permission_rules.py): "allow always" remembered for one host, sandboxed mode following
`[sandbox] network`, the tool offered to the model where its mode lets it run, and the
`[web_fetch]` config table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_server.config import load_config
from acp_server.models.base import ModelConfigError, ToolCallRequest
from acp_server.tools.base import ToolKind
from acp_server.tools.builtin.web import WebFetch
from acp_server.tools.command_sandbox import CommandSandbox, SandboxSettings
from acp_server.tools.permissions import Answer, Mode, PermissionPolicy
from acp_server.tools.web_access import WebFetchSettings
from acp_server.tools.workspace import PathRoots
from tests.support.turns import fresh_signal

pytestmark = pytest.mark.anyio


class Asker:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.titles: list[str] = []

    async def ask(self, call_id: str, title: str, reason: str, signal: object) -> Answer:
        self.titles.append(title)
        return self.answer


def fetch_policy(
    tmp_path: Path, mode: Mode, answer: Answer = "allow_once", network: bool = False
) -> tuple[PermissionPolicy, Asker, list[tuple[ToolKind, bool, str]]]:
    path_roots = PathRoots(str(tmp_path))
    commands = CommandSandbox(path_roots, "bwrap", SandboxSettings(network=network))
    asker = Asker(answer)
    remembered: list[tuple[ToolKind, bool, str]] = []
    policy = PermissionPolicy(
        path_roots,
        {"web_fetch": WebFetch(path_roots)},
        asker,
        mode,
        remember=lambda kind, allow, scope: remembered.append((kind, allow, scope)),
        command_sandbox=commands,
    )
    return policy, asker, remembered


def fetch(url: str) -> ToolCallRequest:
    return ToolCallRequest(call_id="c1", name="web_fetch", arguments={"url": url})


async def test_allow_always_is_remembered_for_the_host(tmp_path: Path) -> None:
    policy, asker, remembered = fetch_policy(tmp_path, "default", "allow_always")
    assert await policy.approve(fetch("https://docs.python.org/3/"), fresh_signal()) is None
    assert remembered == [("fetch", True, "fetch web_fetch host=docs.python.org")]
    assert asker.titles == ["Fetch https://docs.python.org/3/"]
    asker.answer = "reject_once"
    assert await policy.approve(fetch("http://docs.python.org/x"), fresh_signal()) is None
    denied = await policy.approve(fetch("https://python.org/"), fresh_signal())
    assert denied is not None and len(asker.titles) == 2


@pytest.mark.parametrize("network", [False, True])
async def test_sandboxed_mode_follows_the_network_setting(tmp_path: Path, network: bool) -> None:
    policy, asker, _ = fetch_policy(tmp_path, "sandboxed", network=network)
    verdict = await policy.approve(fetch("https://example.com/"), fresh_signal())
    assert asker.titles == []
    if network:
        assert verdict is None
    else:
        assert verdict is not None and "network = true" in verdict.reason
    assert policy.offers(policy.tools["web_fetch"]) is network


@pytest.mark.parametrize(
    ("mode", "can_ask", "offered"),
    [
        ("default", True, True),
        ("read_only", True, True),
        ("accept_edits", True, True),
        ("bypass", False, True),
        ("default", False, False),  # a subagent cannot ask
    ],
)
def test_the_tool_is_offered_where_its_mode_lets_it_run(
    tmp_path: Path, mode: Mode, can_ask: bool, offered: bool
) -> None:
    policy, _, _ = fetch_policy(tmp_path, mode)
    assert policy.offers(policy.tools["web_fetch"], can_ask=can_ask) is offered


async def test_a_subagent_is_offered_the_tool_once_a_host_is_allowed_always(
    tmp_path: Path,
) -> None:
    policy, _, _ = fetch_policy(tmp_path, "default", "allow_always")
    await policy.approve(fetch("https://docs.python.org/"), fresh_signal())
    assert policy.offers(policy.tools["web_fetch"], can_ask=False)


def test_the_config_file_sets_the_web_fetch_limits(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[web_fetch]\nmax_bytes = 1000\ntimeout = 2.5\nmax_redirects = 0\n"
        "allow_private_addresses = true\n"
    )
    assert load_config(config).web_fetch == WebFetchSettings(1000, 2.5, 0, True)
    config.write_text("")
    assert load_config(config).web_fetch == WebFetchSettings()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("max_bytes = 0", "[web_fetch] `max_bytes` must be above 0"),
        ("max_bytes = -1", "[web_fetch] `max_bytes` must be a whole number"),
        ('timeout = "30"', "[web_fetch] `timeout` must be a number of seconds above 0"),
        ("allow_private_addresses = 1", "`allow_private_addresses` must be true or false"),
        ("proxy = 'x'", "unknown key `proxy` in [web_fetch]"),
    ],
)
def test_a_bad_web_fetch_table_is_refused_with_the_reason(
    tmp_path: Path, body: str, said: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[web_fetch]\n{body}\n")
    with pytest.raises(ModelConfigError, match=re.escape(said)):
        load_config(config)
