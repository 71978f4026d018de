"""The container image, built from this checkout and spoken to over ACP (opt-in).

Run with `ACP_SERVER_DOCKER_TEST=1 uv run pytest tests/docker`: it builds the image (minutes,
and the network for the base image and the wheels), so the default run skips it and says
why, as it does on a machine with no engine (neither a working `docker info` nor podman and
buildah). `ACP_SERVER_DOCKER_BASE` names a local base image for the Dockerfile's
`PYTHON_IMAGE` (a machine that cannot pull `python:3.11-slim`). The engines and checks are in
`tests/docker/engines.py`; docs/docker.md says what each check shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.docker.engines import (
    Docker,
    Engine,
    Podman,
    available_engine,
    check_fixture,
    check_pid1,
    check_tour,
    check_workspace,
)

OPT_IN = "ACP_SERVER_DOCKER_TEST"


def _skip_reason() -> str | None:
    if os.environ.get(OPT_IN) != "1":
        return f"opt-in: set {OPT_IN}=1 to build the image and run it (minutes, network)"
    engine, why = available_engine()
    return None if engine else f"no container engine: {why}"


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    """The image built once for the module, with the engine that runs it."""
    name, _ = available_engine()
    base = os.environ.get("ACP_SERVER_DOCKER_BASE") or None
    built: Engine = (
        Podman("localhost/acp-server:test", base)
        if name == "podman"
        else Docker("acp-server:test", base)
    )
    built.build()
    try:
        yield built
    finally:
        built.close()


def test_a_piped_fixture_is_answered_in_order_and_eof_exits_0(engine: Engine) -> None:
    check_fixture(engine)


def test_the_tour_matches_its_golden_transcript(engine: Engine) -> None:
    assert check_tour(engine) is not None, "no examples/tour/tour.jsonl in this checkout"


def test_the_editor_command_reads_and_writes_the_mounted_workspace_as_the_user(
    engine: Engine,
) -> None:
    check_workspace(engine)


def test_as_pid_1_it_reaps_its_tools_orphans_and_exits_0_on_sigterm(engine: Engine) -> None:
    if check_pid1(engine) is None:
        pytest.skip("podman: a PID namespace needs root and unshare")
