"""The version: `acp-server --version` prints the pyproject version, and the ACP registry
manifest (agent.json, icon.svg) installs exactly that version."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from xml.etree import ElementTree

from tests.support.agent_process import SERVER

REPO = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def test_version_prints_the_pyproject_version() -> None:
    done = subprocess.run(
        [SERVER, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0
    assert done.stdout == f"acp-server {VERSION}\n"


def test_the_registry_manifest_installs_this_version() -> None:
    manifest = json.loads((REPO / "agent.json").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert manifest["id"] == project["name"] == "acp-server"
    assert manifest["version"] == VERSION
    assert manifest["distribution"] == {"uvx": {"package": f"acp-server=={VERSION}"}}
    assert manifest["license"] == project["license"]
    assert manifest["repository"].startswith("https://")
    assert manifest["icon"] == "./icon.svg"


def test_the_icon_is_16_by_16_and_monochrome() -> None:
    # What the registry's build_registry.py checks: square 16x16, every fill and stroke
    # currentColor or none, currentColor used.
    svg = (REPO / "icon.svg").read_text()
    root = ElementTree.fromstring(svg)
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == ("16", "16", "0 0 16 16")
    paints = {
        value
        for element in root.iter()
        for name, value in element.attrib.items()
        if name in ("fill", "stroke")
    }
    assert paints <= {"currentColor", "none"} and "currentColor" in paints
    assert "style=" not in svg
