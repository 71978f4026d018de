"""Where a change goes, "add a journaled field" (docs/architecture.md): a field is declared in
records.py and filled by the recorder from what it is given, and every journal reads it, old or
new. Checked on the code:

- a tool result is built from the call as the client was shown it and the tool's whole output,
  so no caller hands the recorder a tool's values one by one (that records are built by the
  recorder alone is `tests/test_layers.py`'s `test_records_are_built_by_the_recorder_alone`);
- no durable struct requires a field it was not first written with (`REQUIRED`): a field added
  later has a default, so every journal written before it still decodes;
- every record but `turn/end` and its outcome ignores the fields it does not know, so an older
  build loads a journal that a newer one added a field to;
- the list on the architecture page has at most 3 files, and they exist.
"""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path

import msgspec
import msgspec.inspect as mi
import pytest

from acp_server.session import records as rec
from acp_server.session.journal import JournalHeader
from acp_server.session.recorder import Recorder

REPO = Path(__file__).resolve().parent.parent
MAX_FILES = 3

REQUIRED: dict[str, frozenset[str]] = {
    name: frozenset(fields.split())
    for name, fields in {
        "TurnStart": "turn_id at",
        "UserMessage": "message_id content origin at",
        "TextPart": "text",
        "ImagePart": "data mime_type",
        "ResourcePart": "uri",
        "ResourceLinkPart": "uri name",
        "StepStart": "turn_id step at",
        "AssistantMessage": "turn_id message_id parts at",
        "ThoughtPart": "text",
        "ToolCallRecord": "call_id name arguments",
        "ToolResult": "turn_id call_id status output at",
        "DiffRecord": "path new_text",
        "LocationRecord": "path",
        "FileCheckpoint": "path after",
        "StepEnd": "turn_id step finish at",
        "TurnEndRecord": "turn_id outcome at",
        "Completed": "",
        "Aborted": "",
        "ErrorOutcome": "message",
        "DisposedOutcome": "",
        "MaxTokens": "",
        "MaxTurnRequests": "",
        "Refusal": "",
        "InterruptedOutcome": "",
        "PlanRecord": "turn_id entries at",
        "PlanEntryRecord": "content priority status",
        "ModeChange": "mode at",
        "ModelChange": "model at",
        "PermissionRule": "tool_kind decision at",
        "SystemPromptChange": "mode text at",
        "Compaction": "compaction_id kept_from tokens_before tokens_after at",
        "Rewind": "rewind_id turn_id at",
        "RewindKept": "path reason",
        "BackgroundStart": "item command at",
        "BackgroundEnd": "item how at",
        "JournalHeader": "session_id cwd created_at",
    }.items()
}
"""The fields each durable struct was first written with and still requires. A field added
since has a default, or the journals written before it would stop loading. A new record kind
lists here the fields it is first written with."""

STRICT = frozenset({"TurnEndRecord"})
"""Records that refuse fields they do not know (the journal RFC: no cancel cause comes back
through a journal); their outcomes are strict as well."""


def durable_structs() -> dict[str, mi.StructType]:
    """Every Struct a journal line holds, by class name: the records, what they nest, and the
    header."""
    found: dict[str, mi.StructType] = {}

    def walk(info: mi.Type) -> None:
        if isinstance(info, mi.StructType):
            if info.cls.__name__ not in found:
                found[info.cls.__name__] = info
                for field in info.fields:
                    walk(field.type)
        elif isinstance(info, mi.UnionType):
            for member in info.types:
                walk(member)
        elif isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
            walk(info.item_type)
        elif isinstance(info, mi.DictType):
            walk(info.value_type)

    for info in mi.multi_type_info([rec.Record, JournalHeader]):
        walk(info)
    return found


def added_required_fields(structs: dict[str, mi.StructType]) -> list[str]:
    """`Struct.field` for every required field a struct was not first written with."""
    problems = []
    for name, info in sorted(structs.items()):
        if name not in REQUIRED:
            problems.append(f"{name}: a new durable struct; list its first fields in REQUIRED")
            continue
        for field in info.fields:
            if field.required and field.name not in REQUIRED[name]:
                problems.append(f"{name}.{field.name}: added without a default")
    return problems


def test_a_field_added_to_a_record_has_a_default() -> None:
    structs = durable_structs()
    assert {"ToolResult", "DiffRecord", "Aborted", "JournalHeader"} <= structs.keys()
    assert added_required_fields(structs) == []


def test_the_checker_reports_a_required_field_added_later() -> None:
    class ToolResult(msgspec.Struct):
        turn_id: str
        call_id: str
        status: str
        output: str
        at: str
        run_ms: int
        exit_code: int | None = None

    class Unlisted(msgspec.Struct):
        x: int

    structs = {}
    for cls in (ToolResult, Unlisted):
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType)
        structs[cls.__name__] = info
    assert added_required_fields(structs) == [
        "ToolResult.run_ms: added without a default",
        "Unlisted: a new durable struct; list its first fields in REQUIRED",
    ]


def test_records_but_the_turn_end_ignore_fields_they_do_not_know() -> None:
    outcomes = {cls.__name__ for cls in typing.get_args(rec.Outcome)}
    strict = {name for name, info in durable_structs().items() if info.forbid_unknown_fields}
    assert strict == STRICT | outcomes


def test_an_older_build_reads_a_newer_field_and_refuses_a_newer_kind() -> None:
    # What the page says an older build does with a journal written by newer code.
    newer_field = (
        b'{"type":"tool/result","turn_id":"t","call_id":"c","status":"completed",'
        b'"output":"x","run_ms":12,"at":"2026-12-06T00:00:00.000Z"}'
    )
    result = rec.decode_record(newer_field)
    assert isinstance(result, rec.ToolResult) and b"run_ms" not in rec.encode_record(result)
    with pytest.raises(msgspec.ValidationError, match="unknown field `run_ms`"):
        rec.decode_record(
            b'{"type":"turn/end","turn_id":"t","outcome":{"kind":"completed"},'
            b'"run_ms":12,"at":"2026-12-06T00:00:00.000Z"}'
        )
    with pytest.raises(msgspec.ValidationError, match="Invalid value 'session/effort'"):
        rec.decode_record(b'{"type":"session/effort","level":"high","at":"x"}')


def test_a_tool_result_is_built_from_the_call_as_shown_and_the_tool_output() -> None:
    # A caller hands over its two objects; the recorder reads their fields itself, so a field
    # of a tool's output is journaled without a change to the agent. (A value neither holds,
    # such as a run time the agent measures, would come as a parameter of its own.)
    parameters = inspect.signature(Recorder.tool_result).parameters
    assert list(parameters)[:4] == ["self", "shown", "output", "synthetic"]
    assert not {"text", "failed", "diffs", "locations", "images", "title"} & parameters.keys()


def change_list(page: str, heading: str) -> list[str]:
    """The numbered items under `### heading` of the architecture page."""
    section = page.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\d+\. (.*)$", section, re.MULTILINE)


def test_adding_a_journaled_field_touches_the_listed_files_and_no_more() -> None:
    items = change_list((REPO / "docs" / "architecture.md").read_text(), "Add a journaled field")
    assert 1 <= len(items) <= MAX_FILES
    named = [re.match(r"`([^`]+)`", item) for item in items]
    assert all(named), items
    files = [match.group(1) for match in named if match]
    assert files[:2] == ["acp_server/session/records.py", "acp_server/session/recorder.py"]
    for name in files:
        assert (REPO / name).is_file(), name
