"""What a benchmark mode is, and where the modes are found.

A mode is one module in benchmarks/modes/ that defines `MODE = Mode(...)`; adding a module adds the
subcommand, nothing else needs to name it.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from typing import NamedTuple

from benchmarks import modes
from benchmarks.measure import Result


class Mode(NamedTuple):
    """One subcommand: `uv run benchmarks NAME`."""

    name: str
    title: str  # its docs/benchmarks.md section: "## <title>"
    help: str
    add_args: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], Result]
    render: Callable[[Result], str]


def discover() -> dict[str, Mode]:
    """Every mode in benchmarks/modes/, by name, in the order of their module names."""
    found: dict[str, Mode] = {}
    for info in sorted(pkgutil.iter_modules(modes.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{modes.__name__}.{info.name}")
        mode = getattr(module, "MODE", None)
        if not isinstance(mode, Mode):
            raise TypeError(f"{module.__name__} defines no MODE = Mode(...)")
        if mode.name in found:
            raise ValueError(f"two modes named {mode.name!r}")
        found[mode.name] = mode
    return found
