"""The configuration file: read once, at the top, by the command line: only `cli.py` imports
this module (`tests/test_layers.py`); its `setup` and `doctor` commands in `firstrun/` get the
path and this reader from it (`firstrun/config_access.py`).

Where: `config.toml` in the config dir (`acp_server.paths`: `$XDG_CONFIG_HOME/acp-server/`, else
`~/.config/acp-server/`). A missing file at the default place is the same as an empty one.
Example:

    default_model = "openai:gpt-4o-mini"
    models = ["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"]
    max_steps = 200                 # model requests per turn
    context_threshold = 0.8         # compact requests above this fraction of the window
    max_repeated_calls = 3          # same call, same result: the turn ends after this many
    max_failed_calls = 5            # same tool failing the same way in a row: ends after this

    [subagents]
    max_depth = 2                   # a subagent may start subagents this many levels deep
    max_seconds = 600               # a subagent still running after this is cancelled

    [providers.openai]
    base_url = "http://127.0.0.1:8080/v1"   # a local llama.cpp / vLLM / Ollama server
    api_key_env = "OPENAI_API_KEY"          # the variable the key is read from
    # api_key = "..."                       # or the key itself (what `acp-server setup`
                                            # writes when a key is typed; the file is 0600)
    read_timeout = 120                      # seconds between chunks (default 60)
    context_window = 32768                  # tokens; else asked of the server, else a default
    max_output_tokens = 8192                # tokens one request may generate (default 8192)

    [providers.openai.models."qwen2.5-coder-7b"]
    context_window = 8192                   # this model only
    max_output_tokens = 2048                # this model only
    text_tool_calls = true                  # run a call the model wrote as text (default:
                                            # on for OpenAI-compatible servers, not OpenAI)
    images = true                           # the model takes images (default: Anthropic and
                                            # OpenAI do; other servers are asked, /props)
    edit_format = "whole_file"              # or "search_replace", "tool_calls" (the default)
    temperature = 0                         # sent with every request (default: none sent)
    auto_test = true                        # run the tests after its edits (default: on
                                            # with a text edit format)

    [providers.anthropic]
    api_key_env = "ANTHROPIC_API_KEY"

    [tools]
    max_result_bytes = 65536    # the most of one tool result the model is sent
    max_read_lines = 2000       # read_file's window when no limit is given
    max_search_results = 500    # matches grep, paths glob, entries list_dir show
    max_checkpoint_bytes = 4194304  # largest file whose content is kept for /rewind (0: none)
    max_checkpoint_store_bytes = 268435456  # all kept contents; oldest evicted past it
    max_image_bytes = 3932160   # the largest image file read_file returns as an image

    [instructions]
    files = ["AGENTS.md", "CLAUDE.md"]   # looked for from the repository root down to the cwd
    max_bytes = 32768                    # budget for all instruction files together

    [sandbox]                            # commands in sandboxed mode
    network = false                      # reach the network without asking
    writable = ["~/.cache"]              # writable besides the workspace

    [web_fetch]                          # the web_fetch tool
    max_bytes = 2097152                  # the most of one response downloaded, undone, converted
    timeout = 30                         # seconds one fetch may take, conversion included
    max_redirects = 5                    # same-host redirects followed
    allow_private_addresses = false      # fetch loopback / private / link-local hosts

    [skills]                             # where skills (folders with SKILL.md) are found
    dirs = [".agents/skills", ".claude/skills"]   # relative: in each directory from the
                                         # repository root down to the cwd; absolute or ~: the
                                         # user's own (the config dir's skills/ is always read)

    [tests]                              # the test runs after a model's edits (auto_test)
    command = "python -m pytest -q"      # default: found in the repository
    max_rounds = 3                       # test runs in one turn, at most

Each table's type and its validation live with the code that uses it; this module only maps the
file's keys to them (`_SECTIONS`), finds the line a message names, and picks the model:

- `default_model`, `models`: `Config.default`, `Config.offered`, here (the CLI's choice);
- `max_steps`, `context_threshold`, `max_repeated_calls`, `max_failed_calls`, `[subagents]`:
  `TurnLimits`, `agent/settings.py`;
- `[providers.NAME]`: `ProviderTables`, `models/providers.py` (the provider registry);
- `[tools]`: `ToolBudget`, `tools/budget.py`;
- `[instructions]`: `InstructionSettings`, `agent/instruction_settings.py`;
- `[sandbox]`: `SandboxSettings`, `tools/sandbox_settings.py`;
- `[web_fetch]`: `WebFetchSettings`, `tools/web_access.py`;
- `[skills]`: `SkillPlaces`, `tools/skill_places.py`;
- `[tests]`: `AutoTestSettings`, `tools/test_command.py`.

A new key is a field and a check in its owner's module (and a row here for a new table). The
fields are the keys docs/configuration.md lists (`scripts/config_reference.py` writes it from
them): a field's name is its key unless its metadata says otherwise (`config_key`, None for a
field the file does not set), a field holding a table says which (`config_table`), and its
docstring is the key's description.

Which model a server uses (`choose_model_spec`): `--model` > `ACP_SERVER_MODEL` >
`default_model` here. Which endpoint a provider talks to (`acp_server.models.spec.load_model`):
the provider's base URL variable (`OPENAI_BASE_URL`, ...) > `base_url` here > the public
endpoint. The API key is `api_key` here when set, else read from the variable named by
`api_key_env` (default: the registry row's, `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`); a table may
not set both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_server.agent.instruction_settings import InstructionSettings, instruction_settings
from acp_server.agent.settings import TURN_KEYS, TurnLimits, turn_limits
from acp_server.models.base import ModelConfigError
from acp_server.models.providers import ProviderSettings, ProviderTables, provider_tables
from acp_server.models.spec import check_spec
from acp_server.paths import config_dir
from acp_server.tools.budget import ToolBudget, tool_budget
from acp_server.tools.sandbox_settings import SandboxSettings, sandbox_settings
from acp_server.tools.skill_places import SkillPlaces, skill_places
from acp_server.tools.test_command import AutoTestSettings, read_tests_table
from acp_server.tools.web_access import WebFetchSettings, web_fetch_settings

__all__ = [
    "MODEL_ENV",
    "Config",
    "choose_model_spec",
    "config_from_text",
    "config_path",
    "load_config",
]

MODEL_ENV = "ACP_SERVER_MODEL"
"""The environment variable naming the model when `--model` is not given."""


@dataclass(frozen=True, slots=True)
class Config:
    """What the config file says (all defaults when there is no file)."""

    default: str | None = field(default=None, metadata={"config_key": "default_model"})
    """`default_model`: used when neither `--model` nor ACP_SERVER_MODEL is given."""
    offered: list[str] = field(default_factory=list, metadata={"config_key": "models"})
    """`models`: the specs offered to clients as the session's `model` option, in the file's
    order."""
    providers: ProviderTables = field(
        default_factory=ProviderTables,
        metadata={"config_table": "providers.NAME", "config_type": ProviderSettings},
    )
    """`[providers.NAME]` tables (with the file's path, for messages)."""
    tools: ToolBudget = field(default_factory=ToolBudget, metadata={"config_table": "tools"})
    """`[tools]`: how much of a tool's result reaches the model."""
    path: Path | None = field(default=None, metadata={"config_key": None})
    """The file these came from, for messages; None when no file was read."""
    instructions: InstructionSettings = field(
        default_factory=InstructionSettings, metadata={"config_table": "instructions"}
    )
    """`[instructions]`: which project instruction files reach the system prompt."""
    turn: TurnLimits = field(default_factory=TurnLimits, metadata={"config_table": ""})
    """`max_steps`, `context_threshold`, `max_repeated_calls`, `max_failed_calls`,
    `[subagents]`."""
    sandbox: SandboxSettings = field(
        default_factory=SandboxSettings, metadata={"config_table": "sandbox"}
    )
    """`[sandbox]`: what commands may do in sandboxed mode."""
    web_fetch: WebFetchSettings = field(
        default_factory=WebFetchSettings, metadata={"config_table": "web_fetch"}
    )
    """`[web_fetch]`: the web_fetch tool's limits and reach."""
    skills: SkillPlaces = field(default_factory=SkillPlaces, metadata={"config_table": "skills"})
    """`[skills]`: where skills are looked for (`acp_server/tools/skill_places.py`)."""
    tests: AutoTestSettings = field(
        default_factory=AutoTestSettings, metadata={"config_table": "tests"}
    )
    """`[tests]`: the project's test command and the test runs after the model's edits."""

    def provider(self, name: str) -> ProviderSettings:
        """The settings of provider `name` (empty when the file has no table for it)."""
        return self.providers.provider(name)


def config_path(environ: Mapping[str, str] = os.environ) -> Path:
    """`config.toml` in the user's config dir (`acp_server.paths.config_dir`)."""
    return config_dir(environ) / "config.toml"


def choose_model_spec(
    cli: str | None,
    config: Config | None = None,
    environ: Mapping[str, str] = os.environ,
) -> str | None:
    """The model spec to use: `--model` > ACP_SERVER_MODEL > the file's `default_model`.

    Empty values count as unset. None when nothing names a model.
    """
    if cli:
        return cli
    from_env = environ.get(MODEL_ENV)
    if from_env:
        return from_env
    if config is not None and config.default:
        return config.default
    return None


def load_config(path: str | Path | None = None, environ: Mapping[str, str] = os.environ) -> Config:
    """Read the config file: `path`, else `config_path(environ)`.

    A missing file at the default place gives the defaults; a missing file that was named
    explicitly, unreadable files, invalid TOML and unexpected keys or values raise
    ModelConfigError naming the file (and the line, where it can be found).
    """
    explicit = path is not None
    file = Path(path).expanduser() if path is not None else config_path(environ)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        if explicit:
            raise ModelConfigError(f"config file {file}: not found") from None
        return Config()
    except OSError as exc:
        raise ModelConfigError(f"config file {file}: cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelConfigError(f"config file {file}: not UTF-8 ({exc.reason})") from None
    return config_from_text(text, file)


def config_from_text(text: str, file: Path) -> Config:
    """What the config file says when it holds `text`; messages name `file`. `setup` checks the
    file it is about to write this way, without writing it anywhere first.

    Raises ModelConfigError as `load_config` does.
    """
    # Only when there is a file: without one, no spawn pays for the parser (~5 ms) before
    # `session/new` is answered (the ready-before-the-runtime RFC).
    import tomllib

    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelConfigError(f"config file {file}: invalid TOML: {exc}") from None
    return _Reader(file, text).config(table)


Error = Callable[[str, str | None, str | None], Exception]

_SECTIONS: dict[str, tuple[str, Callable[[Any, Error], Any]]] = {
    "tools": ("tools", tool_budget),
    "instructions": ("instructions", instruction_settings),
    "sandbox": ("sandbox", sandbox_settings),
    "web_fetch": ("web_fetch", web_fetch_settings),
    "skills": ("skills", skill_places),
    "tests": ("tests", read_tests_table),
}
"""Table name -> (`Config` field, the owner's reader)."""

_EXPECTED = (
    "default_model, models, max_steps, context_threshold, max_repeated_calls, "
    "max_failed_calls, [providers.NAME], [tools], [instructions], [sandbox], [subagents], "
    "[web_fetch], [skills] or [tests]"
)


def _table_header(line: str) -> str | None:
    """The name of the `[table]` a line opens (quotes and spaces dropped), else None.

    Found with `find`, not a regex: the regex it replaces retried its lazy name group at every
    character of a long run of spaces, which was quadratic in the line's length.
    """
    stripped = line.lstrip()
    if not stripped.startswith("[") or stripped.startswith("[["):
        return None
    end = stripped.find("]")
    if end < 0:
        return None
    name = stripped[1:end].strip().replace('"', "").replace(" ", "")
    return name or None


class _Reader:
    """Validates a decoded file; messages say `config file PATH, line N: ...`."""

    def __init__(self, file: Path, text: str) -> None:
        self.file = file
        self.lines = text.splitlines()

    def error(self, problem: str, key: str | None = None, table: str | None = None) -> Exception:
        line = self._line_of(key, table) if key is not None else None
        where = f", line {line}" if line is not None else ""
        return ModelConfigError(f"config file {self.file}{where}: {problem}")

    def _line_of(self, key: str, table: str | None) -> int | None:
        """Where `key = ...` is written (inside `[table]` when given); a best effort."""
        current: str | None = None
        key_re = re.compile(rf"\s*(?:\"{re.escape(key)}\"|{re.escape(key)})\s*=")
        for number, line in enumerate(self.lines, start=1):
            header = _table_header(line)
            if header is not None:
                current = header
                if table is not None and current == table and key == "":
                    return number
                continue
            if current == table and key and key_re.match(line):
                return number
        return None

    def config(self, table: dict[str, Any]) -> Config:
        values: dict[str, Any] = {"path": self.file}
        turn: dict[str, Any] = {}
        for key, value in table.items():
            if key == "default_model":
                if not isinstance(value, str):
                    raise self.error("`default_model` must be a string", key)
                problem = check_spec(value)
                if problem is not None:
                    raise self.error(f"`default_model`: {problem}", key)
                values["default"] = value
            elif key == "models":
                values["offered"] = self.offered(value)
            elif key == "providers":
                values["providers"] = provider_tables(value, self.error, self.file)
            elif key in TURN_KEYS or key == "subagents":
                turn[key] = value
            elif key in _SECTIONS:
                name, read = _SECTIONS[key]
                values[name] = read(value, self.error)
            else:
                raise self.error(f"unknown key `{key}`; expected {_EXPECTED}", key)
        values.setdefault("providers", ProviderTables(path=self.file))
        return Config(**values, turn=turn_limits(turn, self.error))

    def offered(self, value: Any) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error("`models` must be a list of model specs (strings)", "models")
        offered: list[str] = []
        for spec in value:
            problem = check_spec(spec)
            if problem is not None:
                raise self.error(f"`models`: {problem}", "models")
            if spec not in offered:
                offered.append(spec)
        return offered
