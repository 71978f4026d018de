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
    assert manifest["icon"] == "./icon.svg"


def test_the_registry_manifest_says_the_package_is_not_published_yet() -> None:
    # Until the package is on PyPI, `uvx acp-server` finds nothing: the entry says so and how
    # to install meanwhile, and names no made-up repository (before submitting it: publish,
    # then set `repository` and drop the sentence; docs/editors.md).
    text = (REPO / "agent.json").read_text()
    description = json.loads(text)["description"]
    assert "Not yet published to PyPI" in description
    assert "uv tool install ." in description
    assert "OWNER" not in text and "repository" not in json.loads(text)
    readme = (REPO / "README.md").read_text()
    assert "The package is not published yet" in readme and "uv tool install ." in readme


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
