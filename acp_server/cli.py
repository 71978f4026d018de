"""The `acp-server` command: parse arguments, configure logging, serve. No other logic here.

Imports beyond argparse happen after parsing: every editor spawn pays for them before
`initialize` can be answered.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from acp_server import __version__

if TYPE_CHECKING:
    from acp_server.config import Config
    from acp_server.firstrun.config_access import ConfigAccess

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
COMMANDS = ("setup", "doctor")


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface (documented in docs/cli.md and docs/configuration.md)."""
    # A small table, loaded by serving anyway: the help names each provider and key variable.
    from acp_server.models.providers import PROVIDERS, default_key_variables

    specs = "".join(f"{name}:MODEL, " for name in PROVIDERS)
    parser = argparse.ArgumentParser(
        prog="acp-server",
        description="An Agent Client Protocol agent speaking JSON-RPC over stdin/stdout. "
        "With a command, run that instead of serving: `setup` asks for a provider, key and "
        "model and writes the config file; `doctor` checks what a first prompt needs. The "
        "options may come before or after the command.",
    )
    parser.add_argument(
        "command",
        nargs="?",
        choices=COMMANDS,
        help="setup: configure a model interactively; doctor: check the configuration "
        "(default: serve ACP on stdin/stdout)",
    )
    parser.add_argument(
        "--model",
        metavar="SPEC",
        help=f"the model: {specs}script:PATH (a scripted model file) "
        "or echo; default: $ACP_SERVER_MODEL, else default_model in the config file",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help="where session journals live (default: $XDG_DATA_HOME/acp-server, "
        "else ~/.local/share/acp-server)",
    )
    parser.add_argument(
        "--mode",
        default="default",
        choices=("default", "accept_edits", "read_only", "sandboxed", "bypass"),
        help="permission mode of new sessions (default: default, which asks before edits "
        "and commands)",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=LOG_LEVELS,
        help="logging threshold; logs always go to stderr (default: warning)",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=_positive_int,
        default=64 * 1024 * 1024,
        metavar="N",
        help="longest accepted input line; a longer one gets -32600 and is skipped "
        "(default: 64 MiB)",
    )
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="reproducible session, turn and message ids and a fixed clock starting at "
        "2026-01-01T00:00:00.000Z, for golden transcripts (also: ACP_SERVER_DETERMINISTIC=1)",
    )
    parser.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="let commands, hooks and MCP servers inherit the provider key variable NAME "
        f"(repeatable); by default {', '.join(default_key_variables())} and every api_key_env "
        "of the config file are removed from their environment",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"acp-server {__version__}",
        help="print the version and exit",
    )
    return parser


def default_data_dir() -> Path:
    """`$XDG_DATA_HOME/acp-server`, or `~/.local/share/acp-server` (`acp_server.paths`)."""
    from acp_server.paths import data_dir

    return data_dir()


def _config_access() -> ConfigAccess[Config]:
    """The config file for `setup` and `doctor`: only this module imports its reader."""
    from acp_server.config import (
        MODEL_ENV,
        Config,
        choose_model_spec,
        config_from_text,
        config_path,
        load_config,
    )
    from acp_server.firstrun.config_access import ConfigAccess

    return ConfigAccess(
        config_path(), load_config, config_from_text, Config, choose_model_spec, MODEL_ENV
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    args = build_parser().parse_args(argv)

    import logging

    from acp_server import redaction

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        redaction.RedactingFormatter("acp-server %(levelname)s %(name)s: %(message)s")
    )
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler])
    if args.command == "setup":
        from acp_server.firstrun.setup import run_setup

        return run_setup(args, _config_access())
    if args.command == "doctor":
        from acp_server.firstrun.doctor import run_doctor

        return run_doctor(args, default_data_dir(), _config_access())
    from acp_server.config import choose_model_spec, config_path, load_config
    from acp_server.models.base import ModelConfigError
    from acp_server.models.providers import default_key_variables, url_credentials
    from acp_server.models.spec import load_model
    from acp_server.process.own_environment import scrub

    # Before the config file is read: its errors may quote the default keys' values. Both
    # lists come from the provider registry.
    credentials = url_credentials()
    redaction.remember(os.environ.get(name) for name in default_key_variables())
    # A base URL's password is a key; the whole URL is not (its host helps an error).
    redaction.remember(
        part for userinfo in credentials.values() for part in (userinfo, userinfo.split(":")[-1])
    )
    try:
        config = load_config()
        key_names = config.providers.key_variables()
        redaction.remember(os.environ.get(name) for name in key_names)
        redaction.remember(config.providers.file_keys())
        secret_names = key_names | credentials.keys()
        spec = choose_model_spec(args.model, config)
        model = load_model(spec, config.providers) if spec else None
    except ModelConfigError as exc:
        print(f"acp-server: {redaction.redact(str(exc))}", file=sys.stderr)
        return 2
    # Children read /proc/<our pid>/environ, which os.environ changes do not rewrite.
    scrub(secret_names)
    hidden = secret_names - set(args.pass_env)
    child_environment = {k: v for k, v in os.environ.items() if k not in hidden}
    offered = tuple(dict.fromkeys([*([spec] if spec else []), *config.offered]))

    from acp_server.tools.modes import ModeRefused, check_mode

    try:
        mode = check_mode(args.mode)
    except ModeRefused as exc:
        print(f"acp-server: {exc}", file=sys.stderr)
        return 2

    from acp_server import determinism

    # Installed before anything runs: the clock is configuration, like a seed (determinism.py).
    deterministic = determinism.requested(args.deterministic)
    ids = determinism.install().ids if deterministic else None

    from dataclasses import replace

    from acp_server.acp.options import ServerOptions
    from acp_server.agent.instruction_settings import user_instructions_file
    from acp_server.server import run
    from acp_server.tools.toolbox import ToolSettings

    # The one translation: the file's sections, plus what only the command line knows (the
    # user's own AGENTS.md, the fixed date of --deterministic), into what their owners take;
    # `[skills]` serves the system prompt's listing and the skill tool alike.
    instructions = replace(
        config.instructions, user_file=user_instructions_file(), skill_places=config.skills
    )
    if deterministic:
        instructions = replace(instructions, today=determinism.today)
    run(
        ServerOptions(
            data_dir=args.data_dir or default_data_dir(),
            max_line_bytes=args.max_line_bytes,
            model=model,
            model_spec=spec,
            offered_models=offered,
            load_model=functools.partial(load_model, providers=config.providers),
            config_path=config_path(),
            forget_keys=_forget_stored_keys,
            turn_limits=config.turn,
            mode=mode,
            ids=ids,
            child_environment=child_environment,
            tools=ToolSettings(
                config.tools, config.sandbox, config.web_fetch, config.skills, config.tests
            ),
            instructions=instructions,
            deterministic=deterministic,
        )
    )
    return 0


def _forget_stored_keys() -> tuple[str, ...]:
    """Logout's edit of the config file (run by the bridge when a client logs out)."""
    from acp_server.config import config_path
    from acp_server.firstrun.stored_key import forget_stored_keys

    return forget_stored_keys(config_path())


if __name__ == "__main__":
    sys.exit(main())
