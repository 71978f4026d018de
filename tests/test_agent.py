"""`acp_server.agent`'s names load on first use: the table that says where each lives matches
`__all__`, and every name resolves to the object its module defines."""

from __future__ import annotations

import importlib
import subprocess
import sys

import acp_server.agent as face


def test_every_public_name_resolves_from_its_module() -> None:
    assert sorted(face._HOME) == sorted(face.__all__)
    for name, home in face._HOME.items():
        module = importlib.import_module(f"acp_server.agent.{home}")
        assert getattr(face, name) is getattr(module, name), name


def test_reading_the_settings_types_does_not_load_the_loop() -> None:
    """What the CLI imports to read the config file, before `initialize` is answered."""
    code = (
        "import sys; import acp_server.config; "
        "print('acp_server.agent.loop' in sys.modules, 'acp_server.agent.agent' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]
