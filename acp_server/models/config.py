"""The model configuration file: default model, offered models, provider endpoints.

Where: `$XDG_CONFIG_HOME/acp-server/config.toml`, else `~/.config/acp-server/config.toml`.
A missing file at the default place is the same as an empty one. Example:

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

    [providers.anthropic]
    api_key_env = "ANTHROPIC_API_KEY"

    [tools]
    max_result_bytes = 65536    # the most of one tool result the model is sent
    max_read_lines = 2000       # read_file's window when no limit is given
    max_search_results = 500    # matches grep, paths glob, entries list_dir show
    max_checkpoint_bytes = 4194304  # largest file whose content is kept for /rewind (0: none)
    max_image_bytes = 3932160   # the largest image file read_file returns as an image

    [instructions]
    files = ["AGENTS.md", "CLAUDE.md"]   # looked for from the repository root down to the cwd
    max_bytes = 32768                    # budget for all instruction files together

    [sandbox]                            # commands in sandboxed mode
    network = false                      # reach the network without asking
    writable = ["~/.cache"]              # writable besides the workspace

    [web_fetch]                          # the web_fetch tool
    max_bytes = 2097152                  # the most of one response downloaded
    timeout = 30                         # seconds one fetch may take, redirects included
    max_redirects = 5                    # same-host redirects followed
    allow_private_addresses = false      # fetch loopback / private / link-local hosts

    [skills]                             # where skills (folders with SKILL.md) are found
    dirs = [".agents/skills", ".claude/skills"]   # relative: in each directory from the
                                         # repository root down to the cwd; absolute or ~: the
                                         # user's own (the config dir's skills/ is always read)

Which model a server uses (`choose_model_spec`): `--model` > `ACP_SERVER_MODEL` >
`default_model` here. Which endpoint a provider talks to (`acp_server.models.spec.load_model`):
the `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` variable > `base_url` here > the public
endpoint. The API key is `api_key` here when set (`acp-server setup` writes it, with the file's
mode 0600, when the user types a key), else read from the variable named by `api_key_env`
(default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`); a table may not set both.

Over 500 lines: one wire format: the config file, one validating reader for every table,
so that every message names the file, the line and the expected values the same way.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_server.models.base import ModelConfigError
from acp_server.paths import config_dir
from acp_server.tools.budget import ToolBudget
from acp_server.tools.command_sandbox import SandboxSettings, sandbox_settings
from acp_server.tools.skill_places import SkillPlaces, skill_places
from acp_server.tools.web_access import WebFetchSettings, web_fetch_settings

__all__ = [
    "DEFAULT_MAX_FAILED_CALLS",
    "DEFAULT_MAX_REPEATED_CALLS",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_SUBAGENT_DEPTH",
    "DEFAULT_SUBAGENT_SECONDS",
    "DEFAULT_THRESHOLD",
    "MODEL_ENV",
    "PROVIDERS",
    "AgentSettings",
    "InstructionFiles",
    "ModelSettings",
    "ProviderSettings",
    "check_spec",
    "choose_model_spec",
    "config_path",
    "file_keys",
    "key_variables",
    "load_settings",
    "url_credentials",
]

MODEL_ENV = "ACP_SERVER_MODEL"
"""The environment variable naming the model when `--model` is not given."""

PROVIDERS = ("openai", "anthropic")
"""The providers a `[providers.NAME]` table may configure."""

DEFAULT_KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")

_SPEC_PREFIXES = ("script", *PROVIDERS)

DEFAULT_MAX_STEPS = 200
"""Model requests per turn. A long agentic task (read, edit, test, fix, across many files)
takes a hundred steps or more; the limit only stops a runaway loop, which the repeated-call
check usually stops much earlier."""
DEFAULT_THRESHOLD = 0.8
"""The fraction of the context window above which a request is compacted before it is sent:
the rest is room for the answer and for the estimate's error."""
DEFAULT_MAX_REPEATED_CALLS = 3
"""Repeats of one call with one result a turn may make before it ends."""
DEFAULT_SUBAGENT_DEPTH = 2
"""How deep subagents nest: a client's session's child may start one more level, no deeper."""
DEFAULT_SUBAGENT_SECONDS = 600.0
"""How long one subagent may run before it is cancelled."""
DEFAULT_MAX_FAILED_CALLS = 5
"""Consecutive failures of one tool with one kind of error a turn may have before it ends."""


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """One `[providers.NAME]` table; None means "not set here"."""

    base_url: str | None = None
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    """The key itself, when the file holds it (never shown: `repr` leaves it out)."""
    connect_timeout: float | None = None
    read_timeout: float | None = None
    context_window: int | None = None
    """Tokens the provider's models hold (the context budget's window; `usage_update` size)."""
    model_windows: dict[str, int] = field(default_factory=dict)
    """`context_window` of single models (`[providers.NAME.models."MODEL"]`), by model name."""
    max_output_tokens: int | None = None
    """Tokens one request may generate (see `acp_server.models.output`)."""
    model_outputs: dict[str, int] = field(default_factory=dict)
    """`max_output_tokens` of single models, by model name."""
    text_tool_calls: bool | None = None
    """Recognise tool calls written as text (see acp_server/agent/text_calls.py)."""
    model_text_calls: dict[str, bool] = field(default_factory=dict)
    """`text_tool_calls` of single models, by model name."""
    images: bool | None = None
    """The provider's models take images (see acp_server/models/images.py)."""
    model_images: dict[str, bool] = field(default_factory=dict)
    """`images` of single models, by model name."""

    def window_for(self, model: str) -> int | None:
        """The configured window of `model`: its own, else the provider's, else None."""
        return self.model_windows.get(model, self.context_window)

    def text_calls_for(self, model: str) -> bool | None:
        """The configured `text_tool_calls` of `model`: its own, else the provider's, else
        None (the provider's default)."""
        return self.model_text_calls.get(model, self.text_tool_calls)

    def images_for(self, model: str) -> bool | None:
        """The configured `images` of `model`: its own, else the provider's, else None."""
        return self.model_images.get(model, self.images)

    def output_for(self, model: str) -> int | None:
        """The configured output limit of `model`: its own, else the provider's, else None."""
        return self.model_outputs.get(model, self.max_output_tokens)


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """The file's top-level settings of every agent turn."""

    max_steps: int = DEFAULT_MAX_STEPS
    context_threshold: float = DEFAULT_THRESHOLD
    max_repeated_calls: int = DEFAULT_MAX_REPEATED_CALLS
    max_failed_calls: int = DEFAULT_MAX_FAILED_CALLS
    subagent_max_depth: int = DEFAULT_SUBAGENT_DEPTH
    """`[subagents] max_depth`."""
    subagent_max_seconds: float = DEFAULT_SUBAGENT_SECONDS
    """`[subagents] max_seconds`."""


@dataclass(frozen=True, slots=True)
class InstructionFiles:
    """The `[instructions]` table; None means "not set here" (the defaults apply)."""

    files: tuple[str, ...] | None = None
    """File names read as project instructions (default: AGENTS.md)."""
    max_bytes: int | None = None
    """Budget for all instruction files together."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """What the config file says (all empty when there is no file)."""

    default: str | None = None
    """`default_model`: used when neither `--model` nor ACP_SERVER_MODEL is given."""
    offered: list[str] = field(default_factory=list)
    """`models`: the specs offered to clients as choices, in the file's order."""
    providers: dict[str, ProviderSettings] = field(default_factory=dict)
    """`[providers.NAME]` tables by provider name (`openai`, `anthropic`)."""
    tools: ToolBudget = field(default_factory=ToolBudget)
    """`[tools]`: how much of a tool's result reaches the model."""
    path: Path | None = None
    """The file these came from, for messages; None when no file was read."""
    instructions: InstructionFiles = field(default_factory=InstructionFiles)
    """`[instructions]`: which project instruction files reach the system prompt."""
    agent: AgentSettings = field(default_factory=AgentSettings)
    """`max_steps`, `context_threshold`, `max_repeated_calls`."""
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    """`[sandbox]`: what commands may do in sandboxed mode."""
    web_fetch: WebFetchSettings = field(default_factory=WebFetchSettings)
    """`[web_fetch]`: the web_fetch tool's limits and reach."""
    skills: SkillPlaces = field(default_factory=SkillPlaces)
    """`[skills]`: where skills are looked for (`acp_server/tools/skill_places.py`)."""

    def provider(self, name: str) -> ProviderSettings:
        """The settings of provider `name` (empty when the file has no table for it)."""
        return self.providers.get(name) or ProviderSettings()


def file_keys(settings: ModelSettings) -> list[str]:
    """The keys the config file holds itself (`api_key`), to be redacted wherever they might
    be quoted."""
    return [p.api_key for p in settings.providers.values() if p.api_key]


def key_variables(settings: ModelSettings) -> frozenset[str]:
    """Every environment variable a provider key may come from: the defaults and each
    `api_key_env` of the config file."""
    named = (p.api_key_env for p in settings.providers.values() if p.api_key_env)
    return frozenset((*DEFAULT_KEY_VARIABLES, *named))


BASE_URL_VARIABLES = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


def url_credentials(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The base URL variables that carry credentials (`https://user:password@host`), each
    with its userinfo: such a URL is a key, and is treated like one."""
    found: dict[str, str] = {}
    for name in BASE_URL_VARIABLES:
        value = environ.get(name, "")
        scheme, separator, rest = value.partition("://")
        userinfo, at, _ = rest.split("/", 1)[0].rpartition("@")
        if scheme and separator and at and userinfo:
            found[name] = userinfo
    return found


def config_path(environ: Mapping[str, str] = os.environ) -> Path:
    """`config.toml` in the user's config dir (`acp_server.paths.config_dir`)."""
    return config_dir(environ) / "config.toml"


def check_spec(spec: str) -> str | None:
    """Why `spec` is not a model spec, or None when it has a valid form.

    Only the form is checked (`echo`, `script:PATH`, `openai:MODEL`, `anthropic:MODEL`);
    nothing is read or contacted.
    """
    if spec == "echo":
        return None
    prefix, colon, rest = spec.partition(":")
    if not colon or prefix not in _SPEC_PREFIXES:
        return (
            f"unknown model spec {spec!r}; expected script:PATH, echo, openai:MODEL or "
            "anthropic:MODEL"
        )
    if not rest:
        if prefix == "script":
            return f"model spec {spec!r} needs a path: script:PATH"
        return f"model spec {spec!r} needs a model name: {prefix}:MODEL"
    return None


def choose_model_spec(
    cli: str | None,
    settings: ModelSettings | None = None,
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
    if settings is not None and settings.default:
        return settings.default
    return None


def load_settings(
    path: str | Path | None = None, environ: Mapping[str, str] = os.environ
) -> ModelSettings:
    """Read the config file: `path`, else `config_path(environ)`.

    A missing file at the default place gives empty settings; a missing file that was named
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
        return ModelSettings()
    except OSError as exc:
        raise ModelConfigError(f"config file {file}: cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
        table = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ModelConfigError(f"config file {file}: not UTF-8 ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelConfigError(f"config file {file}: invalid TOML: {exc}") from None
    return _Reader(file, text).settings(table)


_PROVIDER_KEYS = {
    "base_url": str,
    "api_key_env": str,
    "api_key": str,
    "connect_timeout": float,
    "read_timeout": float,
    "context_window": int,
    "max_output_tokens": int,
    "text_tool_calls": bool,
    "images": bool,
}

_TOOL_MINIMUMS = {
    "max_result_bytes": 1024,
    "max_read_lines": 1,
    "max_search_results": 1,
    "max_checkpoint_bytes": 0,
    "max_image_bytes": 1024,
}
"""The `[tools]` keys and their smallest values (a result must hold its closing note)."""


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

    def settings(self, table: dict[str, Any]) -> ModelSettings:
        default: str | None = None
        offered: list[str] = []
        providers: dict[str, ProviderSettings] = {}
        agent: dict[str, Any] = {}
        tools = ToolBudget()
        instructions = InstructionFiles()
        sandbox = SandboxSettings()
        web_fetch = WebFetchSettings()
        skills = SkillPlaces()
        for key, value in table.items():
            if key == "default_model":
                if not isinstance(value, str):
                    raise self.error("`default_model` must be a string", key)
                problem = check_spec(value)
                if problem is not None:
                    raise self.error(f"`default_model`: {problem}", key)
                default = value
            elif key == "models":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise self.error("`models` must be a list of model specs (strings)", key)
                for spec in value:
                    problem = check_spec(spec)
                    if problem is not None:
                        raise self.error(f"`models`: {problem}", key)
                    if spec not in offered:
                        offered.append(spec)
            elif key == "providers":
                if not isinstance(value, dict):
                    raise self.error("`providers` must be a table of [providers.NAME]", key)
                for name, entry in value.items():
                    providers[name] = self.provider(name, entry)
            elif key == "tools":
                tools = self.tools(value)
            elif key == "instructions":
                instructions = self.instructions(value)
            elif key in ("max_steps", "max_repeated_calls", "max_failed_calls"):
                agent[key] = self.positive_int(value, key)
            elif key == "context_threshold":
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise self.error("`context_threshold` must be a number", key)
                if not 0 < value <= 1:
                    raise self.error("`context_threshold` must be above 0 and at most 1", key)
                agent[key] = float(value)
            elif key == "sandbox":
                sandbox = sandbox_settings(value, self.error)
            elif key == "subagents":
                agent.update(self.subagents(value))
            elif key == "web_fetch":
                web_fetch = web_fetch_settings(value, self.error)
            elif key == "skills":
                skills = skill_places(value, self.error)
            else:
                raise self.error(
                    f"unknown key `{key}`; expected default_model, models, max_steps, "
                    "context_threshold, max_repeated_calls, max_failed_calls, "
                    "[providers.NAME], [tools], "
                    "[instructions], [sandbox], [subagents], [web_fetch] or [skills]",
                    key,
                )
        return ModelSettings(
            default,
            offered,
            providers,
            tools,
            self.file,
            instructions,
            AgentSettings(**agent),
            sandbox,
            web_fetch,
            skills,
        )

    def subagents(self, entry: Any) -> dict[str, Any]:
        """`[subagents]`: `max_depth` (levels) and `max_seconds` (per child)."""
        if not isinstance(entry, dict):
            raise self.error("[subagents] must be a table", "subagents")
        values: dict[str, Any] = {}
        for key, value in entry.items():
            if key == "max_depth":
                values["subagent_max_depth"] = self.positive_int(value, key, "subagents")
            elif key == "max_seconds":
                if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                    raise self.error(
                        "[subagents] `max_seconds` must be positive (seconds)", key, "subagents"
                    )
                values["subagent_max_seconds"] = float(value)
            else:
                raise self.error(
                    f"unknown key `{key}` in [subagents]; expected max_depth or max_seconds",
                    key,
                    "subagents",
                )
        return values

    def positive_int(self, value: Any, key: str, table: str | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            where = f"[{table}] " if table is not None else ""
            raise self.error(f"{where}`{key}` must be a positive integer", key, table)
        return value

    def instructions(self, entry: Any) -> InstructionFiles:
        table = "instructions"
        if not isinstance(entry, dict):
            raise self.error("[instructions] must be a table", "instructions")
        files: tuple[str, ...] | None = None
        max_bytes: int | None = None
        for key, value in entry.items():
            if key == "files":
                if not isinstance(value, list) or not all(
                    isinstance(v, str) and v and "/" not in v and v not in (".", "..")
                    for v in value
                ):
                    raise self.error(
                        "[instructions] `files` must be a list of file names (no directories)",
                        key,
                        table,
                    )
                files = tuple(value)
            elif key == "max_bytes":
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise self.error(
                        "[instructions] `max_bytes` must be a whole number of bytes (0 or more)",
                        key,
                        table,
                    )
                max_bytes = value
            else:
                raise self.error(
                    f"unknown key `{key}` in [instructions]; expected files or max_bytes",
                    key,
                    table,
                )
        return InstructionFiles(files, max_bytes)

    def provider(self, name: str, entry: Any) -> ProviderSettings:
        table = f"providers.{name}"
        if name not in PROVIDERS:
            raise self.error(
                f"unknown provider [{table}]; expected {' or '.join(PROVIDERS)}", "", table
            )
        if not isinstance(entry, dict):
            raise self.error(f"[{table}] must be a table", name, "providers")
        values: dict[str, Any] = {}
        for key, value in entry.items():
            if key == "models":
                (
                    values["model_windows"],
                    values["model_outputs"],
                    values["model_text_calls"],
                    values["model_images"],
                ) = self.model_tables(table, value)
                continue
            kind = _PROVIDER_KEYS.get(key)
            if kind is None:
                raise self.error(
                    f"unknown key `{key}` in [{table}]; expected "
                    f'{", ".join(_PROVIDER_KEYS)} or [{table}.models."MODEL"]',
                    key,
                    table,
                )
            if kind is bool:
                if not isinstance(value, bool):
                    raise self.error(f"[{table}] `{key}` must be true or false", key, table)
            elif kind is str:
                if not isinstance(value, str) or not value:
                    raise self.error(f"[{table}] `{key}` must be a non-empty string", key, table)
            elif kind is int:
                self.positive_int(value, key, table)
            elif isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise self.error(
                    f"[{table}] `{key}` must be a positive number of seconds", key, table
                )
            else:
                value = float(value)
            values[key] = value
        if "api_key" in values and "api_key_env" in values:
            raise self.error(
                f"[{table}] sets both `api_key` and `api_key_env`; keep one", "api_key", table
            )
        return ProviderSettings(**values)

    def model_tables(
        self, table: str, value: Any
    ) -> tuple[dict[str, int], dict[str, int], dict[str, bool], dict[str, bool]]:
        """`[providers.NAME.models."MODEL"]` tables: each may set `context_window`,
        `max_output_tokens`, `text_tool_calls` and `images`; returns each by model name."""
        if not isinstance(value, dict):
            raise self.error(f'[{table}] `models` must be tables [{table}.models."MODEL"]')
        windows: dict[str, int] = {}
        outputs: dict[str, int] = {}
        text_calls: dict[str, bool] = {}
        images: dict[str, bool] = {}
        for model, entry in value.items():
            inner = f"{table}.models.{model}"
            if not isinstance(entry, dict):
                raise self.error(f'[{table}.models."{model}"] must be a table', model)
            for key, setting in entry.items():
                if key == "context_window":
                    windows[model] = self.positive_int(setting, key, inner)
                elif key == "max_output_tokens":
                    outputs[model] = self.positive_int(setting, key, inner)
                elif key in ("text_tool_calls", "images"):
                    if not isinstance(setting, bool):
                        raise self.error(f"[{inner}] `{key}` must be true or false", key, inner)
                    (text_calls if key == "text_tool_calls" else images)[model] = setting
                else:
                    raise self.error(
                        f'unknown key `{key}` in [{table}.models."{model}"]; expected '
                        "context_window, max_output_tokens, text_tool_calls or images",
                        key,
                        inner,
                    )
        return windows, outputs, text_calls, images

    def tools(self, entry: Any) -> ToolBudget:
        if not isinstance(entry, dict):
            raise self.error("[tools] must be a table", "tools")
        values: dict[str, int] = {}
        for key, value in entry.items():
            minimum = _TOOL_MINIMUMS.get(key)
            if minimum is None:
                raise self.error(
                    f"unknown key `{key}` in [tools]; expected {', '.join(_TOOL_MINIMUMS)}",
                    key,
                    "tools",
                )
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise self.error(
                    f"[tools] `{key}` must be an integer of at least {minimum}", key, "tools"
                )
            values[key] = value
        return ToolBudget(**values)
