"""Forgetting the keys `acp-server setup` stored: logout (ACP v1's `logout`, v2's
`auth/logout`) removes each provider table's `api_key` from the config file and keeps the rest
(the provider, its base URL, the model, `api_key_env`), with the same atomic 0600 write as
setup (`configfile.write_atomically`), the file's comments and order kept (tomlkit)."""

from __future__ import annotations

from pathlib import Path

from .configfile import write_atomically

__all__ = ["forget_stored_keys"]


def forget_stored_keys(path: Path) -> tuple[str, ...]:
    """Remove every `[providers.NAME] api_key` from the config file at `path`; the names of
    the providers whose key was removed (none: the file holds no key, or does not exist).

    Raises OSError when the file cannot be read or written, and tomlkit's ParseError (a
    ValueError) when it is not TOML; the file is then as it was.
    """
    import tomlkit
    from tomlkit.items import InlineTable, Table

    try:
        existing = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    doc = tomlkit.parse(existing)
    providers = doc.get("providers")
    removed: list[str] = []
    if isinstance(providers, Table | InlineTable):
        for name, table in providers.items():
            if isinstance(table, Table | InlineTable) and "api_key" in table:
                del table["api_key"]
                removed.append(str(name))
    if removed:
        write_atomically(path, tomlkit.dumps(doc))
    return tuple(removed)
