"""The command sandbox's decisions (acp_server/tools/command_sandbox.py and the policy): how a
`bash` call runs in each mode and with each declared need, what the permission question says,
what a refused command is told, and the config file's `[sandbox]` table."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server.config import load_config
from acp_server.models.base import ModelConfigError
from acp_server.tools.builtin.shell import Bash
from acp_server.tools.command_sandbox import (
    CommandPlan,
    CommandSandbox,
    SandboxSettings,
    refusal_note,
)
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.permissions import PermissionPolicy, decide
from acp_server.tools.workspace import PathRoots
from tests.support.turns import fresh_signal

pytestmark = pytest.mark.anyio


def sandbox(tmp_path: Path, network: bool = False, bwrap: str | None = "bwrap") -> CommandSandbox:
    return CommandSandbox(PathRoots(str(tmp_path)), bwrap, SandboxSettings(network=network))


@pytest.mark.parametrize(
    ("active", "network", "needs", "plan"),
    [
        (False, False, [], CommandPlan(confined=False)),
        (False, False, ["network"], CommandPlan(confined=False, beyond=("network",))),
        (True, False, [], CommandPlan(confined=True)),
        (True, True, [], CommandPlan(confined=True, network=True)),
        (True, False, ["network"], CommandPlan(True, network=True, beyond=("network",))),
        (True, True, ["network"], CommandPlan(confined=True, network=True)),
        (True, False, ["write_outside"], CommandPlan(False, beyond=("write_outside",))),
        (True, False, ["bogus"], CommandPlan(confined=True)),
    ],
)
def test_how_a_call_runs(
    tmp_path: Path, active: bool, network: bool, needs: list[str], plan: CommandPlan
) -> None:
    commands = sandbox(tmp_path, network)
    commands.active = active
    assert commands.plan(needs) == plan


def test_without_bwrap_nothing_is_confined(tmp_path: Path) -> None:
    commands = sandbox(tmp_path, bwrap=None)
    commands.active = True
    assert commands.plan([]) == CommandPlan(confined=False)


def test_sandboxed_mode_allows_confined_commands_and_asks_about_the_rest() -> None:
    assert decide("sandboxed", "execute", True, {}, confined=True) == ("allow", "")
    assert decide("sandboxed", "execute", True, {}, confined=False) == ("ask", "")
    assert decide("sandboxed", "execute", True, {"execute": False}, confined=True)[0] == "deny"
    # confinement counts in sandboxed mode only
    assert decide("accept_edits", "execute", True, {}, confined=True) == ("ask", "")
    assert decide("default", "execute", True, {}, confined=True) == ("ask", "")


class Asker:
    def __init__(self) -> None:
        self.titles: list[str] = []

    async def ask(self, call_id: str, title: str, reason: str, signal: object) -> str:
        self.titles.append(title)
        return "reject_once"


class Call:
    def __init__(self, **arguments: object) -> None:
        self.call_id, self.name, self.arguments = "c1", "bash", dict(arguments)


async def test_the_policy_follows_the_mode_and_says_how_the_command_runs(tmp_path: Path) -> None:
    path_roots = PathRoots(str(tmp_path))
    commands = CommandSandbox(path_roots, "bwrap")
    bash = Bash(path_roots, LocalCommands(), command_sandbox=commands)
    asker = Asker()
    policy = PermissionPolicy(
        path_roots, {"bash": bash}, asker, mode="sandboxed", command_sandbox=commands
    )
    assert commands.active
    assert await policy.approve(Call(command="ls"), fresh_signal()) is None
    assert await policy.approve(Call(command="ls", needs=["network"]), fresh_signal())
    policy.mode = "default"
    assert not commands.active
    assert await policy.approve(Call(command="ls"), fresh_signal())
    assert asker.titles == [
        # it says what the network opens: the host's abstract sockets live in its namespace
        "Run `ls` (sandboxed, with the host's network: what the host reaches, including its "
        "abstract Unix sockets such as X11 and D-Bus)",
        "Run `ls` (not sandboxed)",
    ]


def test_a_refused_write_or_connection_is_named_with_what_to_ask_for() -> None:
    confined = CommandPlan(confined=True)
    note = refusal_note("touch: cannot touch '/etc/x': Read-only file system", confined, ["/w"])
    assert note is not None and "refused a write outside" in note and "/w" in note
    assert 'needs: ["write_outside"]' in note
    note = refusal_note("curl: (6) Could not resolve host: example.com", confined, ["/w"])
    assert note is not None and 'needs: ["network"]' in note
    with_network = CommandPlan(confined=True, network=True)
    assert refusal_note("Could not resolve host: example.com", with_network, ["/w"]) is None
    assert refusal_note("Read-only file system", CommandPlan(confined=False), ["/w"]) is None
    assert refusal_note("make: *** [all] Error 2", confined, ["/w"]) is None


def test_the_config_file_sets_network_and_extra_writable_paths(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[sandbox]\nnetwork = true\nwritable = ["~/.cache", "/opt/x"]\n')
    assert load_config(config).sandbox == SandboxSettings(True, ("~/.cache", "/opt/x"))


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("network = 1", "[sandbox] `network` must be true or false"),
        ('writable = ["relative"]', "[sandbox] `writable` must be a list of paths"),
        ('writable = "/x"', "[sandbox] `writable` must be a list of paths"),
        ("color = true", "unknown key `color` in [sandbox]"),
    ],
)
def test_a_bad_sandbox_table_is_refused_with_the_reason(
    tmp_path: Path, body: str, said: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[sandbox]\n{body}\n")
    with pytest.raises(ModelConfigError, match=said.replace("[", r"\[").replace("]", r"\]")):
        load_config(config)
