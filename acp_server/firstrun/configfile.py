"""Writing the config file (`acp_server.config`): an edit that keeps the rest, written
atomically with mode 0600.

The edit goes through tomlkit, which keeps the file's comments, order and other tables as the
user wrote them. The write is a temporary file in the same directory (created 0600), fsynced,
renamed over the file, and the directory fsynced: a crash or Ctrl-C at any moment leaves either
the old file or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KeySource", "ProviderChoice", "check_editable", "edited_config", "write_atomically"]


@dataclass(frozen=True, slots=True)
class KeySource:
    """Where the provider key comes from: typed (`value`), a variable (`env`), or none."""

    value: str | None = None
    env: str | None = None


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """What setup decided: the config's provider table, its endpoint, the key and the model."""

    provider: str
    """`openai` or `anthropic` (an OpenAI-compatible server is `openai`)."""
    base_url: str
    key: KeySource
    model: str

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.model}"


def check_editable(existing: str) -> None:
    """Raises tomlkit's ParseError (a ValueError) when `existing` is not TOML, which
    `edited_config` could not edit."""
    import tomlkit

    tomlkit.parse(existing)


def edited_config(existing: str, choice: ProviderChoice) -> str:
    """`existing` (the file's text, maybe empty) with `choice` as the default model.

    Raises tomlkit's ParseError (a ValueError) when `existing` is not TOML.
    """
    import tomlkit
    from tomlkit.items import InlineTable, Table

    doc = tomlkit.parse(existing)
    doc["default_model"] = choice.spec  # tomlkit keeps top-level keys above the tables
    models = doc.get("models")
    if isinstance(models, list) and choice.spec not in models:
        models.append(choice.spec)
    providers = doc.get("providers")
    if not isinstance(providers, Table | InlineTable):
        providers = tomlkit.table(is_super_table=True)
        doc["providers"] = providers
    table = providers.get(choice.provider)
    if not isinstance(table, Table | InlineTable):
        table = tomlkit.table()
        providers[choice.provider] = table
    table["base_url"] = choice.base_url
    for stale in ("api_key", "api_key_env"):
        if stale in table:
            del table[stale]
    if choice.key.value is not None:
        table["api_key"] = choice.key.value
    elif choice.key.env is not None:
        table["api_key_env"] = choice.key.env
    return tomlkit.dumps(doc)


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text`: temp file (0600) + fsync + rename + directory fsync.

    The directory is created (0700) when missing. On any failure the temp file is removed and
    `path` is as it was.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temp = _temp_file(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _temp_file(path: Path) -> tuple[int, str]:
    import tempfile

    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o600)
    return fd, name
