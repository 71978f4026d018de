"""jsonrpcserver's dispatch core, imported without the package's `__init__` (issue 26: idle RSS).

`import jsonrpcserver` runs its package `__init__`, which also imports `jsonrpcserver.main` and
`jsonrpcserver.server`. `main` builds a jsonschema validator for the JSON-RPC request schema at
import time (jsonschema, attrs, referencing, rpds and jsonschema's format checkers: about
3.5 MiB of resident memory), and `server` imports `http.server` (with `email`, `socketserver`:
about 1.1 MiB). We use neither: our router has already checked the envelope, so every call
passes its own deserializer and a no-op validator, and we serve stdio, not HTTP. What we call
is the dispatch core that `jsonrpcserver.async_main`'s functions are thin keyword wrappers of:
`async_dispatcher.dispatch_to_response_pure`, plus `result` (`Success`, `Error`) and `sentinels`.

`load()` imports exactly those modules of the installed jsonrpcserver (pinned `<6` in
pyproject.toml) and returns them behind the names the engine calls. The package `__init__` is
skipped by registering an empty package module, built from the package's own spec, while the
submodules import, and removing it again right after: the submodules stay loaded and shared,
and a later plain `import jsonrpcserver` anywhere in the process still runs the real `__init__`
(which then reuses them). Figures:
docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

PACKAGE = "jsonrpcserver"


def import_without_package_init(package: str, *names: str) -> list[ModuleType]:
    """`package.NAME` for each name, imported without running `package/__init__.py` (unless
    the package is imported already, in which case they are imported as usual)."""
    if package in sys.modules:
        return [importlib.import_module(f"{package}.{name}") for name in names]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(f"no package named {package!r}", name=package)
    shell = importlib.util.module_from_spec(spec)  # not executed: no __init__ code runs
    sys.modules[package] = shell
    try:
        return [importlib.import_module(f"{package}.{name}") for name in names]
    finally:
        if sys.modules.get(package) is shell:
            del sys.modules[package]


def _identity(value: Any) -> Any:
    return value


class DispatchCore:
    """What the engine uses of jsonrpcserver, under the package's own names."""

    def __init__(self) -> None:
        dispatcher, result, sentinels = import_without_package_init(
            PACKAGE, "async_dispatcher", "result", "sentinels"
        )
        self._pure: Callable[..., Any] = dispatcher.dispatch_to_response_pure
        self.Success: Callable[..., Any] = result.Success
        self.Error: Callable[..., Any] = result.Error
        self.NODATA: Any = sentinels.NODATA
        self.NOCONTEXT: Any = sentinels.NOCONTEXT

    async def async_dispatch_to_response(
        self,
        request: Any,
        methods: Mapping[str, Callable[..., Any]],
        *,
        context: Any,
        deserializer: Callable[[Any], Any],
        validator: Callable[[Any], Any],
    ) -> Any:
        """`jsonrpcserver.async_dispatch_to_response`, without its default validator."""
        return await self._pure(
            deserializer=deserializer,
            validator=validator,
            post_process=_identity,
            context=context,
            methods=methods,
            request=request,
        )


def load() -> DispatchCore:
    """Import jsonrpcserver's dispatch core (blocking: the caller runs it in a worker thread)."""
    return DispatchCore()
