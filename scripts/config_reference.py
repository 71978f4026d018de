#!/usr/bin/env python3
"""Write docs/configuration.md from the code, so the page cannot drift from what is read.

Three sources, each read from where the code declares it:

- the config file's keys: the fields of `acp_server.config.Config` and of the settings type of
  each table it holds (a field's name is its key unless its metadata says `config_key`; None
  there means the file does not set it; `config_table` marks a field holding a table); the
  type and default come from the field, the description from its docstring;
- the command line: the actions of `acp_server.cli.build_parser()`;
- the environment: every place under acp_server/ and acp_fixture/ that reads a variable
  (`environ.get(NAME)`, `environ[NAME]`, `os.getenv(NAME)`, a call handed `environ` and a
  variable's name; NAME a literal or a constant), plus each provider's key and base URL
  variables from the registry, and every `environ[NAME] = ...` that sets one for a child. A
  description for each is kept in `ENVIRONMENT` and `CHILD_ENVIRONMENT` below; a variable
  found without one, or one described but no longer found, stops the script.

Usage: `uv run scripts/config_reference.py` writes the page; `--check` exits 1 when the page
differs from what it would write (tests/scripts/test_config_reference.py runs that).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import re
import sys
import textwrap
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "configuration.md"
SCANNED = ("acp_server", "acp_fixture")

ENVIRONMENT: dict[str, str] = {
    "ACP_SERVER_MODEL": "The model spec when `--model` is not given; it wins over the config "
    "file's `default_model`.",
    "ACP_SERVER_DETERMINISTIC": "`1` (or `true`, `yes`, `on`) does what `--deterministic` does.",
    "ACP_SERVER_SANDBOXED": "`1` says the agent itself runs in a sandbox (a container): "
    "`bypass` mode is then allowed as root.",
    "OPENAI_API_KEY": "The key of `openai:` models, unless the `[providers.openai]` table sets "
    "`api_key` or names another variable (`api_key_env`). Never passed to commands, hooks or "
    "MCP servers (unless `--pass-env`).",
    "OPENAI_BASE_URL": "The endpoint of `openai:` models (e.g. `http://127.0.0.1:8080/v1` for "
    "llama.cpp, vLLM or Ollama); wins over `base_url`.",
    "ANTHROPIC_API_KEY": "The key of `anthropic:` models, like `OPENAI_API_KEY` for OpenAI.",
    "ANTHROPIC_BASE_URL": "The endpoint of `anthropic:` models; wins over `base_url`.",
    "XDG_CONFIG_HOME": "The config dir is `$XDG_CONFIG_HOME/acp-server/` (`config.toml`, "
    "`hooks.json`, `AGENTS.md`, `commands/`, `skills/`); unset or relative: `~/.config`.",
    "XDG_DATA_HOME": "The default data dir (sessions, checkpoints) is "
    "`$XDG_DATA_HOME/acp-server/`; unset or relative: `~/.local/share`.",
    "HOME": "Where `~` is, for the config and data dirs and the sandbox's hidden directories.",
    "XDG_RUNTIME_DIR": "Hidden from commands in sandboxed mode (it holds sockets).",
    "SHELL": "Named in the system prompt's environment block (default `/bin/sh`).",
}
"""What each environment variable the code reads does, for the page."""

CHILD_ENVIRONMENT: dict[str, str] = {
    "ACP_SERVER_HOOK_EVENT": "For a hook: the event that ran it (`prompt_submit`, `pre_tool`, "
    "`post_tool`, `stop`).",
    "ACP_SERVER_SESSION_ID": "For a hook: the session's id.",
    "ACP_SERVER_PROCESS_TOKEN": "For every process the agent starts: a value unique to that "
    "start, by which the agent finds the descendants that left its process group.",
}
"""What each variable the code sets for its children holds, for the page."""

TYPE_NAMES = {int: "integer", float: "number", bool: "boolean", str: "string", Path: "path"}


@dataclasses.dataclass(frozen=True)
class Key:
    """One key of the config file, as the page shows it."""

    table: str
    """`""` for the top level, else the table's name (`tools`, `providers.NAME`, ...)."""
    name: str
    kind: str
    default: str
    doc: str


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a class, by field name."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, following in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[node.target.id] = " ".join(following.value.value.split())
    return docs


def kind_of(hint: Any) -> str:
    """The TOML type a field's annotation takes, in words."""
    origin = typing.get_origin(hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if origin in (types.UnionType, typing.Union) and len(args) == 1:
        return kind_of(args[0])
    if origin in (tuple, list):
        return f"list of {kind_of(args[0])}s"
    if origin is dict:
        return kind_of(args[-1])
    if hint in TYPE_NAMES:
        return TYPE_NAMES[hint]
    raise ValueError(f"no TOML type for {hint!r}")


def toml_value(value: Any) -> str:
    """A default as it would be written in the file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | Path):
        return f'"{value}"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def default_of(entry: dataclasses.Field[Any]) -> str:
    """The field's default as the page shows it: a TOML value, or `unset`."""
    if entry.default is not dataclasses.MISSING:
        value = entry.default
    elif entry.default_factory is not dataclasses.MISSING:
        value = entry.default_factory()
    else:
        raise ValueError(f"field {entry.name} has no default")
    if value is None or value == {} or value == []:
        return "unset"
    return f"`{toml_value(value)}`"


def without_key_prefix(doc: str, key: str) -> str:
    """A docstring that starts by naming its key (`` `max_steps`: ``) without that name, and
    with a capital letter."""
    doc = re.sub(rf"^`\[?{re.escape(key)}\]?`: ", "", doc)
    return doc[:1].upper() + doc[1:]


def keys_of(cls: type, table: str) -> Iterator[Key]:
    """The keys a settings type reads, its nested tables' keys after its own."""
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    nested: list[tuple[str, type]] = []
    for entry in dataclasses.fields(cls):
        meta = entry.metadata
        if "config_table" in meta:
            nested.append((meta["config_table"], meta.get("config_type", hints[entry.name])))
            continue
        name = meta.get("config_key", entry.name)
        if name is None:
            continue
        doc = docs.get(entry.name)
        if not doc:
            raise ValueError(f"{cls.__name__}.{entry.name} (key `{name}`) has no docstring")
        inner, _, name = name.rpartition(".")
        where = f"{table}.{inner}" if inner else table
        kind, default = kind_of(hints[entry.name]), default_of(entry)
        yield Key(where, name, kind, default, without_key_prefix(doc, name))
    for name, inner_type in nested:
        yield from keys_of(inner_type, name if not table else f"{table}.{name}")


def config_keys() -> list[Key]:
    """Every key of the config file, grouped by table (the top level first)."""
    from acp_server.config import Config

    keys = list(keys_of(Config, ""))
    order = list(dict.fromkeys(key.table for key in keys))
    return sorted(keys, key=lambda key: order.index(key.table))


def _text_arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(keyword.value for keyword in call.keywords)]


def _is_environ(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in ("environ", "env", "environment")


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """The module-level `NAME = "text"` assignments of a module."""
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }


def _modules() -> dict[str, tuple[Path, ast.Module]]:
    """Every scanned module, by dotted name."""
    found: dict[str, tuple[Path, ast.Module]] = {}
    for package in SCANNED:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return found


def variable_names(tree: ast.Module, constants: dict[str, str]) -> Iterator[tuple[str, bool]]:
    """(name, read) for every environment variable a module reads (True) or sets for a child
    (False), where the name can be resolved: a literal, or a constant of this module or one it
    imports."""

    def resolve(node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        return None

    for node in ast.walk(tree):
        named: list[ast.expr] = []
        read = True
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            named, read = [node.slice], isinstance(node.ctx, ast.Load)
        elif isinstance(node, ast.Call):
            func = node.func
            method = func.attr if isinstance(func, ast.Attribute) else ""
            on_environ = isinstance(func, ast.Attribute) and _is_environ(func.value)
            if (method == "get" and on_environ) or method == "getenv":
                named = node.args[:1]
            elif any(_is_environ(argument) for argument in _text_arguments(node)):
                named = _text_arguments(node)
        for argument in named:
            name = resolve(argument)
            if name is not None and re.fullmatch(r"[A-Z][A-Z0-9_]+", name):
                yield name, read


def environment_variables() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The variables the agent reads and those it sets for the processes it starts, each with
    the modules that do it (the registry's rows are read through
    `acp_server/models/providers.py`)."""
    from acp_server.models.providers import PROVIDERS

    modules = _modules()
    constants = {name: _module_constants(tree) for name, (_, tree) in modules.items()}
    found: tuple[dict[str, set[str]], dict[str, set[str]]] = ({}, {})
    for module, (path, tree) in modules.items():
        local = dict(constants[module])
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module in constants and not node.level:
                for alias in node.names:
                    value = constants[node.module].get(alias.name)
                    if value is not None:
                        local[alias.asname or alias.name] = value
        for name, read in variable_names(tree, local):
            if not read and not module.startswith("acp_server"):
                continue  # the fixture runner setting up the server it starts
            found[0 if read else 1].setdefault(name, set()).add(path.relative_to(REPO).as_posix())
    for row in PROVIDERS.values():
        for name in (row.key_variable, row.base_url_variable):
            found[0].setdefault(name, set()).add("acp_server/models/providers.py")
    reads, writes = ({name: sorted(where[name]) for name in sorted(where)} for where in found)
    return reads, writes


def cli_rows() -> list[tuple[str, str, str]]:
    """(option, default, help) for every option of the command line, in the parser's order."""
    from acp_server.cli import build_parser

    rows: list[tuple[str, str, str]] = []
    for action in build_parser()._actions:
        if not action.option_strings:
            choices = " or ".join(f"`{c}`" for c in action.choices or ())
            rows.append((f"command: {choices}", "serve ACP", action.help or ""))
            continue
        option = max(action.option_strings, key=len)
        if option == "--help":
            continue
        text = action.help or ""
        if action.choices:
            text += "; one of " + ", ".join(f"`{choice}`" for choice in action.choices)
        if action.nargs != 0:
            option += f" {action.metavar or action.dest.upper()}"
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) else f"`{default}`"
        rows.append((f"`{option}`", shown, text))
    return rows


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render() -> str:
    """The whole page."""
    from acp_server import config
    from acp_server.models.providers import PROVIDERS

    variables, for_children = environment_variables()
    for found, described, table in (
        (variables, ENVIRONMENT, "ENVIRONMENT"),
        (for_children, CHILD_ENVIRONMENT, "CHILD_ENVIRONMENT"),
    ):
        unknown = sorted(set(found) - set(described))
        stale = sorted(set(described) - set(found))
        if unknown or stale:
            raise SystemExit(
                f"config_reference: describe {unknown} in {table}; drop {stale} (not in the code)"
            )
    doc = config.__doc__ or ""
    start = doc.index("    default_model")
    example = textwrap.dedent(doc[start : doc.index("\n\n", doc.index("[skills]", start))])
    lines = [
        "# Configuration",
        "",
        "<!-- Written by `uv run scripts/config_reference.py` from the code; do not edit. -->",
        "",
        "Every setting has a default; a config file is needed only to change one. Settings come",
        "from the config file, the environment and the command line; where two of them set the",
        "same thing, the row of each says which wins.",
        "",
        "## The config file",
        "",
        "`config.toml` in the config dir: `$XDG_CONFIG_HOME/acp-server/`, else",
        "`~/.config/acp-server/`. A missing file is the same as an empty one; an unknown key, a",
        "value of the wrong type or out of range stops `acp-server` with a message naming the",
        "file, the line and the key. `acp-server setup` writes it (mode 0600). An example:",
        "",
        "```toml",
        example.rstrip(),
        "```",
    ]
    names = " or ".join(f"`{name}`" for name in PROVIDERS)
    for table, keys in _grouped(config_keys()):
        title = f"[{table}]" if table else "Top level"
        lines += ["", f"## {title}", ""]
        if table.startswith("providers.NAME"):
            lines += [f"`NAME` is {names}.", ""]
        lines += ["| key | type | default | what it does |", "|---|---|---|---|"]
        lines += [f"| `{k.name}` | {k.kind} | {_cell(k.default)} | {_cell(k.doc)} |" for k in keys]
    lines += [
        "",
        "## Environment variables",
        "",
        "Read by the agent (found in the code by `scripts/config_reference.py`; the modules "
        "that read each are named).",
        "",
        "| variable | what it does | read in |",
        "|---|---|---|",
    ]
    for name, modules in variables.items():
        where = ", ".join(f"`{module}`" for module in modules)
        lines.append(f"| `{name}` | {_cell(ENVIRONMENT[name])} | {where} |")
    lines += [
        "",
        "Set by the agent for the processes it starts:",
        "",
        "| variable | what it holds | set in |",
        "|---|---|---|",
    ]
    for name, modules in for_children.items():
        where = ", ".join(f"`{module}`" for module in modules)
        lines.append(f"| `{name}` | {_cell(CHILD_ENVIRONMENT[name])} | {where} |")
    lines += [
        "",
        "## Command-line options",
        "",
        "`acp-server [options] [setup|doctor]`; the options may come before or after the",
        "command ([cli.md](cli.md)).",
        "",
        "| option | default | what it does |",
        "|---|---|---|",
    ]
    lines += [f"| {o} | {d} | {_cell(h)} |" for o, d, h in cli_rows()]
    return "\n".join(lines) + "\n"


def _grouped(keys: list[Key]) -> Iterator[tuple[str, list[Key]]]:
    tables = list(dict.fromkeys(key.table for key in keys))
    for table in tables:
        yield table, [key for key in keys if key.table == table]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    text = render()
    if parser.parse_args().check:
        if PAGE.read_text(encoding="utf-8") != text:
            print(
                f"{PAGE.relative_to(REPO)} is stale: run `uv run scripts/config_reference.py`",
                file=sys.stderr,
            )
            return 1
        print(f"OK: {PAGE.relative_to(REPO)} matches the code")
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
