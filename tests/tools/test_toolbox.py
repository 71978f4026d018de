"""A session's tools and their one owner (acp_server/tools/toolbox.py): what a session is
offered from its settings and transports, `add` as the one way the set grows (and who hears
it), the live view the permission policy judges through, the skill held back until a skill
appears, and what a subagent's tools derive from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from acp_server.cancellation import TurnSignal
from acp_server.models.base import ToolCallRequest
from acp_server.tools.base import Location, Tool, ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.permissions import Answer
from acp_server.tools.text_window import TextWindow
from acp_server.tools.toolbox import (
    TASK_TOOL_NAME,
    FormAnswer,
    Machine,
    Toolbox,
    ToolSettings,
    Transports,
)
from acp_server.tools.workspace import CommandResult, CommandWatch, PathRoots
from tests.support.tool_call import a_call
from tests.support.turns import fresh_signal

pytestmark = pytest.mark.anyio

BUILT_INS = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
    "bash",
    "bash_output",
    "bash_stop",
    "todo_write",
    "web_fetch",
]


class Named:
    """A tool that only has a name and a kind (what the toolbox and the policy look at)."""

    description = "a test tool"
    parameters: Mapping[str, Any] = {"type": "object"}

    def __init__(self, name: str, kind: ToolKind = "other") -> None:
        self.name = name
        self.kind = kind

    def title(self, arguments: Mapping[str, Any]) -> str:
        return self.name

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return ()

    async def run(
        self, arguments: Mapping[str, Any], call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        return ToolOutput("ok")


class ClientFiles:
    """A client's `fs/*`: what it was asked, and one text for every file."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def read_text(self, path: str, signal: TurnSignal) -> str:
        self.asked.append(f"read {path}")
        return "from the editor\n"

    async def read_window(
        self, path: str, start: int, max_lines: int, max_bytes: int, signal: TurnSignal
    ) -> TextWindow:
        from acp_server.tools.text_window import window_of_text

        self.asked.append(f"read {path}")
        return window_of_text("from the editor\n", start, max_lines, max_bytes)

    async def write_text(self, path: str, content: str, signal: TurnSignal) -> None:
        self.asked.append(f"write {path}")


class ClientTerminals:
    def __init__(self) -> None:
        self.commands: list[str] = []

    async def run(
        self,
        command: str,
        cwd: str,
        timeout: float,  # noqa: ASYNC109 - the CommandRunner protocol's
        signal: TurnSignal,
        watch: CommandWatch | None = None,
    ) -> CommandResult:
        self.commands.append(command)
        return CommandResult(output="in the terminal\n", exit_code=0)


class Forms:
    async def ask(
        self, message: str, form: Mapping[str, Any], call_id: str, signal: TurnSignal
    ) -> FormAnswer:
        return FormAnswer("decline")


class Asker:
    def __init__(self, answer: Answer) -> None:
        self.answer: Answer = answer
        self.titles: list[str] = []

    async def ask(self, call_id: str, title: str, reason: str, signal: TurnSignal) -> Answer:
        self.titles.append(title)
        return self.answer


def session_toolbox(
    tmp_path: Path, transports: Transports | None = None, user_dir: Path | None = None
) -> Toolbox:
    (tmp_path / "ws").mkdir(exist_ok=True)
    return Toolbox.for_session(
        str(tmp_path / "ws"),
        [],
        ToolSettings(),
        transports or Transports(),
        Machine(tmp_path / "data"),
        user_dir=user_dir,
    )


def names(tools: Sequence[Tool]) -> list[str]:
    return [tool.name for tool in tools]


def write_skill(root: Path, name: str) -> None:
    skill = root / ".agents" / "skills" / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\ndescription: the {name} skill\n---\nDo it.\n")


def test_a_session_is_offered_the_built_ins_and_ask_user_only_with_forms(tmp_path: Path) -> None:
    assert names(session_toolbox(tmp_path).tools) == BUILT_INS
    with_forms = session_toolbox(tmp_path, Transports(forms=Forms()))
    assert names(with_forms.tools) == [*BUILT_INS, "ask_user"]


async def test_files_and_commands_go_through_the_client_where_it_offers_them(
    tmp_path: Path,
) -> None:
    files, terminals = ClientFiles(), ClientTerminals()
    toolbox = session_toolbox(tmp_path, Transports(read=files, commands=terminals))
    (tmp_path / "ws" / "a.txt").write_text("on disk\n")
    tools = toolbox.by_name
    read = await tools["read_file"].run({"path": "a.txt"}, a_call(), fresh_signal())
    assert read.text == "from the editor\n"
    # The client offers no writing: the local disk is written.
    await tools["write_file"].run({"path": "b.txt", "content": "new\n"}, a_call(), fresh_signal())
    assert (tmp_path / "ws" / "b.txt").read_text() == "new\n"
    assert files.asked == [f"read {tmp_path / 'ws' / 'a.txt'}"]
    ran = await tools["bash"].run({"command": "echo hi"}, a_call(), fresh_signal())
    assert terminals.commands == ["echo hi"] and "in the terminal" in ran.text


async def test_without_client_transports_the_local_machine_serves(tmp_path: Path) -> None:
    toolbox = session_toolbox(tmp_path)
    ran = await toolbox.by_name["bash"].run({"command": "echo local"}, a_call(), fresh_signal())
    assert ran.text.startswith("local")
    # What write_file replaces is kept in the toolbox's checkpoint store, for /rewind.
    (tmp_path / "ws" / "c.txt").write_text("before\n")
    wrote = await toolbox.by_name["write_file"].run(
        {"path": "c.txt", "content": "after\n"}, a_call(), fresh_signal()
    )
    [checkpoint] = wrote.checkpoints
    assert checkpoint.before is not None and toolbox.checkpoint_store is not None
    assert toolbox.checkpoint_store.path_of(checkpoint.before).read_bytes() == b"before\n"


def test_add_grows_the_set_in_order_and_tells_each_listener_what_is_new(tmp_path: Path) -> None:
    toolbox = Toolbox(PathRoots(str(tmp_path)), [Named("a")])
    heard: list[list[str]] = []
    toolbox.on_add(lambda new: heard.append(names(new)))
    view = toolbox.by_name
    first_b = Named("b")
    toolbox.add([first_b, Named("c")])
    toolbox.add([Named("b"), Named("a")])  # names offered already keep their first tool
    toolbox.add([])
    assert names(toolbox.tools) == ["a", "b", "c"]
    assert heard == [["b", "c"]]
    assert view["b"] is first_b and set(view) == {"a", "b", "c"}  # the view is live
    with pytest.raises(TypeError):
        toolbox.by_name["d"] = Named("d")  # type: ignore[index]
    assert not hasattr(toolbox.tools, "append")


async def test_the_policy_judges_tools_added_after_it_was_made(tmp_path: Path) -> None:
    toolbox = Toolbox(PathRoots(str(tmp_path)), [Named("reader", "read")])
    asker = Asker("reject_once")
    policy = toolbox.policy(asker, mode="default")
    toolbox.add([Named("mcp__srv__act", "other")])
    call = ToolCallRequest(call_id="c1", name="mcp__srv__act", arguments={})
    denial = await policy.approve(call, fresh_signal())
    assert denial is not None and asker.titles == ["mcp__srv__act"]
    assert policy.offers(toolbox.by_name["mcp__srv__act"], can_ask=False) is False


def test_skill_is_offered_from_the_start_when_a_skill_exists(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    write_skill(tmp_path / "ws", "deploy")
    toolbox = session_toolbox(tmp_path)
    assert names(toolbox.tools) == [*BUILT_INS, "skill"]
    toolbox.offer_skill()
    assert names(toolbox.tools) == [*BUILT_INS, "skill"]


def test_skill_is_held_back_until_one_appears_then_offered_once(tmp_path: Path) -> None:
    toolbox = session_toolbox(tmp_path)
    heard: list[list[str]] = []
    toolbox.on_add(lambda new: heard.append(names(new)))
    toolbox.add([Named(TASK_TOOL_NAME, "think")])
    toolbox.offer_skill()
    toolbox.offer_skill()
    assert names(toolbox.tools) == [*BUILT_INS, TASK_TOOL_NAME, "skill"]
    assert heard == [[TASK_TOOL_NAME], ["skill"]]


def test_a_child_gets_the_tools_as_they_are_now_without_task(tmp_path: Path) -> None:
    toolbox = session_toolbox(tmp_path, Transports(forms=Forms()))
    toolbox.add([Named(TASK_TOOL_NAME, "think")])
    toolbox.add([Named("mcp__srv__late")])  # joined after the task tool was made
    child = toolbox.for_child()
    assert names(child.tools) == [*BUILT_INS, "ask_user", "mcp__srv__late"]
    assert child.path_roots is toolbox.path_roots
    assert child.command_sandbox is toolbox.command_sandbox
    # The child's set is its own: what joins the parent later reaches the next child.
    toolbox.add([Named("mcp__srv__later")])
    child.add([Named(TASK_TOOL_NAME, "think")])
    assert "mcp__srv__later" not in child.by_name
    assert names(toolbox.for_child().tools)[-1] == "mcp__srv__later"
    # A held-back skill is not a child's.
    toolbox.offer_skill()
    assert "skill" not in child.by_name


async def test_resource_links_inside_the_workspace_are_read(tmp_path: Path) -> None:
    from acp_server.session import records as rec

    toolbox = session_toolbox(tmp_path)
    (tmp_path / "ws" / "notes.md").write_text("hello\n")
    (tmp_path / "secret.txt").write_text("no\n")
    parts: list[rec.Part] = [
        rec.ResourceLinkPart(uri=f"file://{tmp_path / 'ws' / 'notes.md'}", name="notes.md"),
        rec.ResourceLinkPart(uri=f"file://{tmp_path / 'secret.txt'}", name="secret.txt"),
    ]
    read = await toolbox.read_links(parts)
    assert isinstance(read[0], rec.ResourcePart) and read[0].text == "hello\n"
    assert isinstance(read[2], rec.TextPart) and "outside the workspace" in read[2].text
