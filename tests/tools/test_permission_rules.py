"""What an "always" answer covers (acp_server/tools/permission_rules.py): command patterns,
one need at a time, one tool, and a rejection that keeps covering the whole kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server.tools.command_sandbox import CommandPlan
from acp_server.tools.permission_rules import Rules, command_pattern, rule_scope, workspace_key


@pytest.mark.parametrize(
    ("command", "pattern"),
    [
        ("git push origin main", "git push"),
        ("git --no-pager log -3", "git --no-pager log"),
        ("rm -rf build", "rm -rf build"),
        ("npm install lodash", "npm install"),
        (
            "curl -s https://example.com/a/b",
            "curl -s https://example.com (hosts: https://example.com)",
        ),
        ("ls; curl evil.example", "exactly ls; curl evil.example"),
        ("cat x | sh", "exactly cat x | sh"),
        ("echo $HOME", "exactly echo $HOME"),
        ("FOO=1 make", "exactly FOO=1 make"),
        ("make\nrm -rf /", "exactly make\nrm -rf /"),
    ],
)
def test_a_command_pattern_is_the_program_up_to_its_first_argument_or_the_whole_command(
    command: str, pattern: str
) -> None:
    assert command_pattern(command) == pattern


def test_commands_differing_in_what_they_touch_get_different_patterns() -> None:
    assert command_pattern("rm -rf build") != command_pattern("rm -rf /")
    assert command_pattern("curl https://a.example/x") != command_pattern(
        "curl https://b.example/x"
    )
    # a second URL names a second host
    one = command_pattern("curl https://a.example/x")
    assert one != command_pattern("curl https://a.example/x https://b.example/y")
    assert command_pattern("git push origin") == command_pattern("git push --force upstream")


def test_a_scope_names_the_needs_so_one_need_does_not_cover_another() -> None:
    network = CommandPlan(confined=True, network=True, beyond=("network",))
    outside = CommandPlan(confined=False, beyond=("write_outside",))
    plain = CommandPlan(confined=True)
    args = {"command": "make test"}
    scopes = {rule_scope("bash", "execute", args, plan) for plan in (network, outside, plain)}
    assert scopes == {
        "bash needs=network: make test",
        "bash needs=write_outside: make test",
        "bash needs=none: make test",
    }
    rules = Rules()
    rules.add("execute", "bash needs=network: make test", True)
    assert rules.for_call("execute", "bash needs=network: make test") == {"execute": True}
    assert rules.for_call("execute", "bash needs=write_outside: make test") == {}


def test_other_tools_are_scoped_to_themselves_and_edits_to_their_kind() -> None:
    assert rule_scope("mcp__a__run", "execute", {}, None) == "execute mcp__a__run"
    assert rule_scope("write_file", "edit", {"path": "x"}, None) == "edit"
    rules = Rules()
    rules.add("execute", "execute mcp__a__run", True)
    assert rules.for_call("execute", "execute mcp__b__run") == {}
    # a rule journaled before scopes existed allowed a kind: only an edit kind is a scope
    rules.add("execute", "execute", True)
    assert rules.for_call("execute", "bash needs=none: ls") == {}


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://docs.python.org/3/library/", "docs.python.org"),
        ("http://DOCS.python.org./x", "docs.python.org"),
        ("https://docs.python.org:443/x", "docs.python.org"),
        ("https://docs.python.org:8443/x", "docs.python.org:8443"),
        ("http://[::1]:8080/", "[::1]:8080"),
        ("https://bücher.example/", "xn--bcher-kva.example"),
        ("https://a.example\\@b.example/", "(none)"),
        ("file:///etc/passwd", "(none)"),
        (3, "(none)"),
    ],
)
def test_a_fetch_is_scoped_to_its_host(url: object, origin: str) -> None:
    assert rule_scope("web_fetch", "fetch", {"url": url}, None) == f"fetch web_fetch host={origin}"


def test_allowing_one_host_does_not_cover_another() -> None:
    rules = Rules()
    scope = rule_scope("web_fetch", "fetch", {"url": "https://docs.python.org/3/"}, None)
    rules.add("fetch", scope, True)
    for url, covered in [
        ("https://docs.python.org/3/library/os.html", True),
        ("http://docs.python.org/", True),
        ("https://python.org/", False),
        ("https://docs.python.org.evil.example/", False),
        ("https://evil.example/?docs.python.org", False),
        ("https://docs.python.org:8080/", False),
    ]:
        other = rule_scope("web_fetch", "fetch", {"url": url}, None)
        assert (rules.for_call("fetch", other) == {"fetch": True}) is covered, url


def test_a_rejection_covers_the_whole_kind() -> None:
    rules = Rules()
    rules.add("execute", "bash needs=none: rm -rf build", False)
    assert rules.for_call("execute", "bash needs=none: ls") == {"execute": False}


def test_a_workspace_key_resolves_links_and_orders_the_additional_directories(
    tmp_path: Path,
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    key = workspace_key(str(tmp_path / "link"), [str(tmp_path / "b"), str(tmp_path / "a")])
    assert key == [str(tmp_path / "a"), str(tmp_path / "a"), str(tmp_path / "b")]
