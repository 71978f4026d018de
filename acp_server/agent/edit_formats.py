"""How a model edits files, and what its requests look like in each edit format.

`tool_calls` (the default) changes nothing: the model calls `edit_file` and `write_file`. In a
text edit format (`whole_file`, `search_replace`) the model writes its changes into its answer
(acp_server/agent/edit_blocks.py) and the loop applies them through those same tools; each
request then carries:

- the format's own short instructions in place of our default system prompt (the
  environment, project instructions and a client's own system prompt stay as they are);
- the files attached to the prompt shown as listings (a path, then the file in a fenced
  block), as the model is to write them back, rather than as `<resource>` tags; and a short
  reminder of the format at the end of the last user message;
- only the tools that look (`TEXT_FORMAT_TOOLS`, with one sentence each, and MCP tools):
  the changes come as text, and the tests are run by the agent (acp_server/agent/test_loop.py);
- temperature 0, unless the model's settings name one: the model copies a file's lines, and
  sampling only adds changes nobody asked for.

See docs/rfc/implemented/feature/2026-12-06-text-edit-formats.md.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote

import msgspec

from acp_server.models.base import ConversationItem, ModelRequest, TextPart, UserMessage
from acp_server.models.model_settings import EDIT_FORMATS, EditFormat

from .compact_prompt import COMPACT_WINDOW, compact_request, compact_tools
from .instructions import DEFAULT_SYSTEM_PROMPT

__all__ = [
    "FORMAT_REMINDERS",
    "SEARCH_REPLACE_PROMPT",
    "TEXT_FORMAT_TOOLS",
    "WHOLE_FILE_PROMPT",
    "edit_format_of",
    "shaped_request",
    "text_format_request",
]

WHOLE_FILE_PROMPT = """\
You are a coding agent. You change files by writing them out whole.

Files are shown as their path on a line of its own, then their content in a code block. Write
each file you change in the same form: its path on a line of its own, then a code block with
the complete new content of the file.

- Write the path exactly as it is shown, alone on its line.
- Write every line of the file, changed or not: never leave lines out or write "..." for them.
- Change only what the task needs; keep every other line exactly as it is.
- Write out only the files you change.
- Say first, in one sentence, what you change and why.
- When nothing needs to change, answer in one or two sentences, without code."""

SEARCH_REPLACE_PROMPT = """\
You are a coding agent. You change files with search/replace blocks.

Files are shown as their path on a line of its own, then their content in a code block. For
each change, write the file's path on a line of its own, then a block of five parts: a line
`<<<<<<< SEARCH`, the lines to change copied exactly from the file, a line `=======`, the new
lines, and a line `>>>>>>> REPLACE`.

- Write the path exactly as it is shown, alone on its line.
- Copy the SEARCH lines exactly, spaces included, with enough lines to be unique.
- An empty SEARCH creates a new file holding the new lines.
- Change only what the task needs.
- Say first, in one sentence, what you change and why.
- When nothing needs to change, answer in one or two sentences, without code."""

FORMAT_REMINDERS: dict[str, str] = {
    "whole_file": (
        "(Answer with each file you change: its path as shown, on a line of its own, then "
        "every line of its new content in a code block.)"
    ),
    "search_replace": (
        "(Answer with a search/replace block for each change: the file's path on a line of "
        "its own, then <<<<<<< SEARCH, the exact old lines, =======, the new lines, "
        ">>>>>>> REPLACE.)"
    ),
}
"""Said again at the end of the request's last user message: a small model follows what it
read last."""

_PROMPTS: dict[str, str] = {
    "whole_file": WHOLE_FILE_PROMPT,
    "search_replace": SEARCH_REPLACE_PROMPT,
}

TEXT_FORMAT_TOOLS: frozenset[str] = frozenset()
"""The built-in tools a text edit format still offers: they look, they change nothing."""


def edit_format_of(model: object) -> EditFormat:
    """The edit format of `model`: its configured `edit_format`, else `tool_calls`."""
    configured = getattr(model, "edit_format", None)
    if isinstance(configured, str) and configured in EDIT_FORMATS:
        return configured  # type: ignore[return-value]
    return "tool_calls"


def text_format_request(
    request: ModelRequest, edit_format: EditFormat, base_prompt: str, cwd: str | None = None
) -> ModelRequest:
    """`request` as a model of the text edit format `edit_format` gets it (see the module
    docstring); `base_prompt` is the agent's configured system prompt, replaced only when it
    is our default one; attached files below `cwd` are named relative to it."""
    system = request.system_prompt
    if base_prompt == DEFAULT_SYSTEM_PROMPT and system.startswith(DEFAULT_SYSTEM_PROMPT):
        system = _PROMPTS[edit_format] + system[len(DEFAULT_SYSTEM_PROMPT) :]
    return msgspec.structs.replace(
        request,
        system_prompt=system,
        messages=_reminded([_with_listings(item, cwd) for item in request.messages], edit_format),
        tools=compact_tools(request.tools, TEXT_FORMAT_TOOLS),
        temperature=0.0 if request.temperature is None else request.temperature,
    )


_RESOURCE = re.compile(r'<resource uri="file://(?P<path>[^"]*)">\n(?P<body>.*)\n</resource>', re.S)
"""A text file attached to the prompt, as `conversation.part_for_model` shows it."""


def _reminded(items: list[ConversationItem], edit_format: EditFormat) -> list[ConversationItem]:
    """`items` with the format's reminder after the last one, when it is a user message (the
    request's own copy: the conversation is not changed)."""
    if not items or not isinstance(items[-1], UserMessage):
        return items
    last = items[-1]
    reminder = TextPart(text=FORMAT_REMINDERS[edit_format])
    return [*items[:-1], UserMessage(parts=[*last.parts, reminder])]


def _with_listings(item: ConversationItem, cwd: str | None) -> ConversationItem:
    """A user message with each attached text file shown as a listing."""
    if not isinstance(item, UserMessage):
        return item
    parts = [
        TextPart(text=_listing(part.text, cwd)) if isinstance(part, TextPart) else part
        for part in item.parts
    ]
    return UserMessage(parts=parts)


def _listing(text: str, cwd: str | None) -> str:
    found = _RESOURCE.fullmatch(text)
    if found is None:
        return text
    path = unquote(found["path"])
    if cwd is not None and os.path.isabs(path) and path.startswith(cwd.rstrip(os.sep) + os.sep):
        path = os.path.relpath(path, cwd)
    body = found["body"]
    fence = "```"
    while fence in body:  # a fence the file's own lines cannot close
        fence += "`"
    return f"{path}\n{fence}\n{body}{'' if body.endswith(chr(10)) else chr(10)}{fence}"


def shaped_request(
    request: ModelRequest,
    edit_format: EditFormat,
    window: int,
    base_prompt: str,
    cwd: str | None = None,
) -> ModelRequest:
    """`request` as the model gets it: in its text edit format's shape, else (tool calls) in
    the compact variant for a window of at most `COMPACT_WINDOW` tokens, else as it is."""
    if edit_format != "tool_calls":
        return text_format_request(request, edit_format, base_prompt, cwd)
    if window <= COMPACT_WINDOW:
        return compact_request(request, base_prompt)
    return request
