"""The permission policy (acp_server/tools/permissions.py) as a table: every mode x tool kind x
inside/outside the workspace, decided by `decide` and carried out by `PermissionPolicy.approve`
on a real workspace, with the user's "always" answers on top.

The expected verdicts are written out here from the promises of docs/tools.md, not computed
from the code: reads inside the workspace never ask; `bypass` allows everything; outside the
workspace only `default` asks, the other modes refuse naming the roots; `read_only` refuses
everything else but a web fetch, which it asks about; `accept_edits` allows edits inside and asks
for the rest; `default` asks; `sandboxed` refuses a web fetch unless `[sandbox] network` is on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

import pytest

from acp_server.models.base import ToolCallRequest
from acp_server.tools.base import Location, ToolKind, ToolOutput
from acp_server.tools.permission_rules import Rules
from acp_server.tools.permissions import (
    MODES,
    OUTSIDE,
    Answer,
    Mode,
    ModeRefused,
    PermissionPolicy,
    Verdict,
    check_mode,
    decide,
)
from acp_server.tools.workspace import PathRoots
from tests.support.turns import fresh_signal

pytestmark = pytest.mark.anyio

ALL_MODES: tuple[Mode, ...] = ("default", "accept_edits", "read_only", "sandboxed", "bypass")
ALL_KINDS: tuple[ToolKind, ...] = get_args(ToolKind)
READS = {"read", "search", "think"}
EDITS = {"edit", "delete", "move"}


def group(kind: str) -> str:
    if kind == "fetch":
        return "fetch"
    return "read" if kind in READS else "edit" if kind in EDITS else "other"


# (mode, kind group, inside) -> verdict, with no "always" answer given yet.
EXPECTED: dict[tuple[Mode, str, bool], Verdict] = {
    ("default", "read", True): "allow",
    ("default", "read", False): "ask",
    ("default", "edit", True): "ask",
    ("default", "edit", False): "ask",
    ("default", "other", True): "ask",
    ("default", "other", False): "ask",
    ("accept_edits", "read", True): "allow",
    ("accept_edits", "read", False): "deny",
    ("accept_edits", "edit", True): "allow",
    ("accept_edits", "edit", False): "deny",
    ("accept_edits", "other", True): "ask",
    ("accept_edits", "other", False): "deny",
    ("read_only", "read", True): "allow",
    ("read_only", "read", False): "deny",
    ("read_only", "edit", True): "deny",
    ("read_only", "edit", False): "deny",
    ("read_only", "other", True): "deny",
    ("read_only", "other", False): "deny",
    # sandboxed: as accept_edits for every call that does not run in the command sandbox
    # (those are in tests/tools/test_command_sandbox_policy.py)
    ("sandboxed", "read", True): "allow",
    ("sandboxed", "read", False): "deny",
    ("sandboxed", "edit", True): "allow",
    ("sandboxed", "edit", False): "deny",
    ("sandboxed", "other", True): "ask",
    ("sandboxed", "other", False): "deny",
    ("bypass", "read", True): "allow",
    ("bypass", "read", False): "allow",
    ("bypass", "edit", True): "allow",
    ("bypass", "edit", False): "allow",
    ("bypass", "other", True): "allow",
    ("bypass", "other", False): "allow",
    # web_fetch changes nothing here: read_only asks like default; sandboxed has no network
    # (with `[sandbox] network` on it allows it, see test_sandboxed_fetch_follows_the_network)
    ("default", "fetch", True): "ask",
    ("default", "fetch", False): "ask",
    ("accept_edits", "fetch", True): "ask",
    ("accept_edits", "fetch", False): "deny",
    ("read_only", "fetch", True): "ask",
    ("read_only", "fetch", False): "deny",
    ("sandboxed", "fetch", True): "deny",
    ("sandboxed", "fetch", False): "deny",
    ("bypass", "fetch", True): "allow",
    ("bypass", "fetch", False): "allow",
}

MATRIX = [
    pytest.param(mode, kind, inside, id=f"{mode}-{kind}-{'inside' if inside else 'outside'}")
    for mode in ALL_MODES
    for kind in ALL_KINDS
    for inside in (True, False)
]


def test_the_table_covers_every_mode_the_policy_offers() -> None:
    assert {m.id for m in MODES} == set(ALL_MODES)
    assert {group(kind) for kind in ALL_KINDS} == {"read", "edit", "other", "fetch"}


@pytest.mark.parametrize(("mode", "kind", "inside"), MATRIX)
def test_decide_without_always_answers(mode: Mode, kind: ToolKind, inside: bool) -> None:
    verdict, reason = decide(mode, kind, inside, {})
    assert verdict == EXPECTED[mode, group(kind), inside]
    if verdict == "deny" and not inside:
        assert reason == OUTSIDE
    elif verdict == "deny" and kind == "fetch":
        assert "[sandbox]" in reason and "network = true" in reason
    elif verdict == "deny":
        assert reason == f"read-only mode allows no {kind} actions"
    else:
        assert reason == ""


@pytest.mark.parametrize(("mode", "kind", "inside"), MATRIX)
def test_decide_after_always_reject(mode: Mode, kind: ToolKind, inside: bool) -> None:
    verdict, reason = decide(mode, kind, inside, {kind: False})
    without = EXPECTED[mode, group(kind), inside]
    if without == "allow" and (mode == "bypass" or (group(kind) == "read" and inside)):
        # Reads inside the workspace and bypass mode never consult the answers.
        assert (verdict, reason) == ("allow", "")
    elif without == "deny":
        assert verdict == "deny"  # already refused, for the reason of the table
    else:
        expected = f"you chose to always reject {kind} actions in this session"
        assert (verdict, reason) == ("deny", expected)


@pytest.mark.parametrize(("mode", "kind", "inside"), MATRIX)
def test_decide_after_always_allow(mode: Mode, kind: ToolKind, inside: bool) -> None:
    verdict, _ = decide(mode, kind, inside, {kind: True})
    without = EXPECTED[mode, group(kind), inside]
    if without == "ask" and inside:
        assert verdict == "allow"  # "always" holds inside the workspace
    else:
        assert verdict == without  # outside it is asked again; refusals stay refusals


@pytest.mark.parametrize("always", [{}, {"fetch": True}], ids=["no-answer", "allowed-always"])
def test_sandboxed_fetch_follows_the_network(always: dict[ToolKind, bool]) -> None:
    assert decide("sandboxed", "fetch", True, always, network=True) == ("allow", "")
    # an "always" answer given in another mode does not open the network of sandboxed mode
    assert decide("sandboxed", "fetch", True, always, network=False)[0] == "deny"
    assert decide("sandboxed", "fetch", True, {"fetch": False}, network=True) == ("allow", "")


def test_an_answer_for_one_kind_does_not_decide_another() -> None:
    assert decide("default", "execute", True, {"edit": True})[0] == "ask"
    assert decide("default", "execute", True, {"edit": False})[0] == "ask"


# --- PermissionPolicy.approve on a real workspace ----------------------------------------------


class KindTool:
    """A tool of one kind that touches one path; only what the policy reads is real."""

    name = "probe"
    description = "touches one path"
    parameters: Mapping[str, Any] = {"type": "object"}

    def __init__(self, kind: ToolKind) -> None:
        self.kind = kind

    def title(self, arguments: Mapping[str, Any]) -> str:
        return f"{self.kind} {arguments['path']}"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return [Location(arguments["path"])]

    async def run(self, arguments: Mapping[str, Any], call: Any, signal: Any) -> ToolOutput:
        raise AssertionError("the policy never runs a tool")


class ScriptedAsker:
    """Answers every question with `answer`, recording (call id, title, reason)."""

    def __init__(self, answer: Answer = "allow_once") -> None:
        self.answer = answer
        self.asked: list[tuple[str, str, str]] = []

    async def ask(self, call_id: str, title: str, reason: str, signal: Any) -> Answer:
        self.asked.append((call_id, title, reason))
        return self.answer


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    inside, outside = tmp_path / "ws", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    return inside.resolve(), outside.resolve()


def policy(
    root: Path, kind: ToolKind, mode: Mode, asker: ScriptedAsker, **kwargs: Any
) -> PermissionPolicy:
    return PermissionPolicy(PathRoots(str(root)), {"probe": KindTool(kind)}, asker, mode, **kwargs)


def probe(path: Path, call_id: str = "call_1") -> ToolCallRequest:
    return ToolCallRequest(call_id=call_id, name="probe", arguments={"path": str(path)})


@pytest.mark.parametrize(("mode", "kind", "inside"), MATRIX)
async def test_approve_carries_out_the_table(
    tmp_path: Path, mode: Mode, kind: ToolKind, inside: bool
) -> None:
    root, elsewhere = workspace(tmp_path)
    target = (root if inside else elsewhere) / "file.txt"
    asker = ScriptedAsker("allow_once")
    permissions = policy(root, kind, mode, asker)
    result = await permissions.approve(probe(target), fresh_signal())
    expected = EXPECTED[mode, group(kind), inside]
    if expected == "allow":
        assert result is None and asker.asked == []
    elif expected == "deny":
        assert result is not None and asker.asked == []
        if not inside:
            assert result.reason == f"{target} is {OUTSIDE}; allowed roots: {root}"
        elif kind == "fetch":
            assert "network = true" in result.reason  # sandboxed mode, no [sandbox] network
        else:
            assert result.reason == f"read-only mode allows no {kind} actions"
    else:
        # The question names where an outside path goes, in its title and its reason.
        title = f"{kind} {target}" if inside else f"{kind} {target} (outside the workspace)"
        why = "" if inside else f"{target} is outside the workspace"
        assert result is None  # the asker allowed it once
        assert asker.asked == [("call_1", title, why)]
    # Only an explicit allow of a path outside the workspace lets the tool's own check pass.
    granted = {str(target)} if result is None and not inside else set()
    assert permissions.path_roots.granted == granted


@pytest.mark.parametrize("answer", ["reject_once", "cancelled"])
async def test_a_refused_question_denies_and_remembers_nothing(tmp_path: Path, answer: Any) -> None:
    root, _ = workspace(tmp_path)
    remembered: list[tuple[str, bool, str]] = []
    asker = ScriptedAsker(answer)
    permissions = policy(
        root, "execute", "default", asker, remember=lambda *rule: remembered.append(rule)
    )
    result = await permissions.approve(probe(root / "x"), fresh_signal())
    assert result is not None
    assert result.reason == (
        "the user rejected this tool call"
        if answer == "reject_once"
        else "the permission request was cancelled"
    )
    assert remembered == [] and permissions.rules == Rules()


@pytest.mark.parametrize(("answer", "allowed"), [("allow_always", True), ("reject_always", False)])
async def test_an_always_answer_holds_for_the_tool_and_is_remembered(
    tmp_path: Path, answer: Answer, allowed: bool
) -> None:
    root, _ = workspace(tmp_path)
    remembered: list[tuple[str, bool, str]] = []
    asker = ScriptedAsker(answer)
    permissions = policy(
        root, "execute", "default", asker, remember=lambda *rule: remembered.append(rule)
    )
    first = await permissions.approve(probe(root / "x", "call_1"), fresh_signal())
    second = await permissions.approve(probe(root / "y", "call_2"), fresh_signal())
    assert (first is None, second is None) == (allowed, allowed)
    assert len(asker.asked) == 1  # the second call was decided by the answer
    # an allow covers this tool (its scope); a rejection the whole kind
    assert remembered == [("execute", allowed, "execute probe")]
    expected = Rules({"execute probe"}) if allowed else Rules(rejected={"execute"})
    assert permissions.rules == expected


async def test_always_answers_given_earlier_are_applied(tmp_path: Path) -> None:
    root, _ = workspace(tmp_path)
    asker = ScriptedAsker()
    permissions = policy(root, "edit", "default", asker, rules=Rules(rejected={"edit"}))
    result = await permissions.approve(probe(root / "x"), fresh_signal())
    assert result is not None and "always reject edit" in result.reason and asker.asked == []


async def test_an_unknown_tool_is_left_to_the_loop(tmp_path: Path) -> None:
    root, _ = workspace(tmp_path)
    asker = ScriptedAsker()
    permissions = policy(root, "execute", "read_only", asker)
    call = ToolCallRequest(call_id="c", name="no_such_tool", arguments={})
    assert await permissions.approve(call, fresh_signal()) is None and asker.asked == []


# --- which modes this process may use ----------------------------------------------------------


def test_check_mode_accepts_every_offered_mode_but_unknown_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    assert [check_mode(m, {}) for m in ALL_MODES] == list(ALL_MODES)
    with pytest.raises(ModeRefused, match="unknown mode 'yolo'; modes: accept_edits, bypass"):
        check_mode("yolo", {})


def test_bypass_is_refused_to_root_unless_sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 0)
    with pytest.raises(ModeRefused, match="bypass mode is refused when acp-server runs as root"):
        check_mode("bypass", {})
    assert check_mode("bypass", {"ACP_SERVER_SANDBOXED": "1"}) == "bypass"
    assert check_mode("default", {}) == "default"


# --- stopping what the session started ---------------------------------------------------------


@pytest.mark.parametrize("mode", ALL_MODES)
async def test_bash_stop_runs_in_every_mode_without_a_question(tmp_path: Path, mode: Mode) -> None:
    # It only undoes what the user allowed when it started (the background-work RFC); a rule
    # "always reject execute" does not keep the model from stopping its own commands either.
    from acp_server.process.background import BackgroundItems
    from acp_server.tools.builtin.background import BashOutput, BashStop

    roots = PathRoots(str(tmp_path), [])
    items = BackgroundItems(None, None)
    tools = {tool.name: tool for tool in (BashOutput(roots, items), BashStop(roots, items))}
    rules = Rules()
    rules.add("execute", "execute", False)
    asker = ScriptedAsker("reject_once")
    policy = PermissionPolicy(roots, tools, asker, mode, rules=rules)
    for name in ("bash_output", "bash_stop"):
        call = ToolCallRequest(call_id="c1", name=name, arguments={"id": "bg_1"})
        assert await policy.approve(call, fresh_signal()) is None
        assert policy.offers(tools[name], can_ask=False)
    assert asker.asked == []
