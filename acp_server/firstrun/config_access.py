"""What `setup` and `doctor` need of the config file, handed to them by the command line.

Only `acp_server/cli.py` imports `acp_server.config` (tests/test_layers.py); it fills a
`ConfigAccess` with the file's path, the server's own reader, the defaults and the model choice,
so the first-run commands read the file exactly as the server does without importing its reader.
Setup checks the file it is about to write with `parse`, from memory: a key it holds is never
written anywhere but the config file (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from acp_server.models.providers import ProviderTables

__all__ = ["ConfigAccess", "Settings"]


class Settings(Protocol):
    """What the first-run commands read of a loaded config."""

    @property
    def path(self) -> Path | None: ...

    @property
    def providers(self) -> ProviderTables: ...


S = TypeVar("S", bound=Settings)


@dataclass(frozen=True, slots=True)
class ConfigAccess(Generic[S]):
    """The config file as the command line reads it."""

    path: Path
    """Where the file is (or would be)."""
    read: Callable[[Path | None], S]
    """The server's reader: that file (`None`: the default place); raises `ModelConfigError`."""
    parse: Callable[[str, Path], S]
    """The same reader on text (what setup is about to write), its messages naming that path;
    nothing is written to check it."""
    defaults: Callable[[], S]
    """The settings when there is no usable file."""
    choose_model: Callable[[str | None, S], str | None]
    """`--model`, else the model variable, else the file's `default_model`."""
    model_env: str
    """The environment variable naming the model."""
