"""The container image stays buildable, checked without a container engine: every path the
Dockerfile copies from the build context exists and is admitted by `.dockerignore`, and every
package the wheel ships is copied (a renamed package once broke `docker build` unnoticed:
`.dockerignore` still admitted `protocol/`). `tests/docker/test_image.py` builds and runs the
image where an engine exists, opt-in (docs/docker.md)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from tests.support.dockerignore import DockerIgnore, copied_sources

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
IGNORE = DockerIgnore.read(ROOT / ".dockerignore")
BYTECODE_DIR = "__pycache__"


def wheel_packages() -> list[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages: list[str] = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    return packages


def context_files(source: str) -> list[str]:
    """The checkout's files under `source` (itself when a file), relative to the root, left
    out the bytecode caches that a build never needs."""
    path = ROOT / source
    if path.is_file():
        return [source]
    found = []
    for directory, subdirs, files in os.walk(path):
        subdirs[:] = [d for d in subdirs if d != BYTECODE_DIR]
        for name in files:
            if not name.endswith((".pyc", ".pyo", ".pyd")):
                found.append(Path(directory, name).relative_to(ROOT).as_posix())
    return found


def refused(ignore: DockerIgnore, sources: list[str]) -> list[str]:
    """The copied paths (each source and every file under it) the build context leaves out."""
    return [
        path
        for source in sources
        for path in [source, *context_files(source)]
        if ignore.excludes(path)
    ]


def test_every_path_the_dockerfile_copies_exists_and_is_in_the_build_context() -> None:
    sources = copied_sources(DOCKERFILE)
    assert "pyproject.toml" in sources and "uv.lock" in sources
    assert [s for s in sources if not (ROOT / s).exists()] == []
    assert refused(IGNORE, sources) == []


def test_every_package_the_wheel_ships_is_copied_into_the_build() -> None:
    sources = copied_sources(DOCKERFILE)
    packages = wheel_packages()
    assert packages, "pyproject.toml names the wheel's packages"
    assert [p for p in packages if p not in sources and "." not in sources] == []
    # The build reads README.md as the package's readme: it is copied too.
    readme = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["readme"]
    assert readme in sources


def test_the_check_catches_a_package_left_out_of_the_build_context() -> None:
    """The `.dockerignore` of before the rename (it admitted `protocol/`) fails the check."""
    old = (ROOT / ".dockerignore").read_text().replace("!acp_protocol/", "!protocol/")
    assert old != (ROOT / ".dockerignore").read_text()
    left_out = refused(DockerIgnore(old), copied_sources(DOCKERFILE))
    assert "acp_protocol" in left_out
    assert "acp_protocol/__init__.py" in left_out
    assert all(p.startswith("acp_protocol") for p in left_out)


def test_bytecode_caches_and_everything_not_admitted_stay_out_of_the_context() -> None:
    for path in [
        "acp_server/__pycache__/server.cpython-311.pyc",
        "acp_server/acp/__pycache__",
        "acp_protocol/x.pyc",
        ".venv/bin/python",
        ".git/HEAD",
        "tests/conftest.py",
        "docs/docker.md",
    ]:
        assert IGNORE.excludes(path), path
    for path in ["acp_server/acp/wiring.py", "acp_fixture", "README.md", "uv.lock"]:
        assert not IGNORE.excludes(path), path


# How Docker reads .dockerignore (moby's patternmatcher, as the builders use it: a path is
# matched by a pattern when it or one of its parent directories is; the last match decides).
@pytest.mark.parametrize(
    ("patterns", "path", "excluded"),
    [
        ("*", "a", True),
        ("*", "a/b/c.py", True),  # by its parent `a`
        ("*\n!a/", "a/b/c.py", False),  # a trailing slash is cleaned away
        ("*\n!a", "ab/c.py", True),  # `a` is not a prefix of `ab`
        ("!a\n*", "a/b.py", True),  # the last match wins
        ("a/*.py", "a/b.py", True),
        ("a/*.py", "a/b/c.py", False),  # neither it nor a parent is `a/<name>.py`
        ("a/*", "a/b/c.py", True),  # its parent `a/b` is `a/*`
        ("*.py", "a/b.py", False),  # `*` stays within one segment
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),  # `**` spans no segment too
        ("a/**/c", "a/c", True),
        ("a/**/c", "a/x/y/c/d", True),
        ("a/**", "a/x/y", True),
        ("a/**", "ab", False),
        ("/a", "a/b", True),  # a leading slash is dropped
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("[ab].txt", "b.txt", True),
        ("[^ab].txt", "b.txt", False),
        ("a\\*b", "a*b", True),
        ("a\\*b", "axb", False),
        ("a.b", "axb", False),  # `.` is literal
        ("# comment\n\n  x  ", "x", True),
        ("*\n!a\na/secret", "a/secret/k", True),
        ("*\n!a\na/secret\n!a/secret/public", "a/secret/public", False),
        ("**/__pycache__\n**/*.py[cod]", "a/b/__pycache__/c.txt", True),
        ("**/__pycache__\n**/*.py[cod]", "a/b.pyc", True),
        ("**/__pycache__\n**/*.py[cod]", "a/b.py", False),
        ("x/../y", "y", True),  # patterns are cleaned like paths
    ],
)
def test_dockerignore_matching_follows_docker(patterns: str, path: str, excluded: bool) -> None:
    assert DockerIgnore(patterns).excludes(path) is excluded
