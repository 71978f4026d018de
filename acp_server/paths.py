"""Where the user's own files live: the one XDG rule for the config and data directories.

`config_dir()` is `$XDG_CONFIG_HOME/acp-server`, else `$HOME/.config/acp-server`;
`data_dir()` is `$XDG_DATA_HOME/acp-server`, else `$HOME/.local/share/acp-server`. As the XDG
Base Directory spec says, an unset, empty or relative variable is ignored (a relative one is
invalid), and the home directory is `$HOME`, else the account's home. The files in the config
dir (`config.toml`, `hooks.json`, `AGENTS.md`, `commands/`) are named by the code that reads
them; the rule that finds the directory is here alone.

A leaf: imports nothing of the project, so every layer may ask it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["APP_DIR", "config_dir", "data_dir"]

APP_DIR = "acp-server"
"""The directory of this program under each XDG base."""


def _base(environ: Mapping[str, str], variable: str, fallback: tuple[str, ...]) -> Path:
    value = environ.get(variable)
    if value and Path(value).is_absolute():
        return Path(value)
    home = environ.get("HOME")
    return (Path(home) if home else Path.home()).joinpath(*fallback)


def config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """`$XDG_CONFIG_HOME/acp-server`, else `~/.config/acp-server`."""
    return _base(environ, "XDG_CONFIG_HOME", (".config",)) / APP_DIR


def data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """`$XDG_DATA_HOME/acp-server`, else `~/.local/share/acp-server` (session journals)."""
    return _base(environ, "XDG_DATA_HOME", (".local", "share")) / APP_DIR
