# acp-server speaks ACP on stdin/stdout: run it with `docker run -i` so stdin stays open.
# Usage, the choices made here and how the image was verified: docs/docker.md.
#
#   docker build -t acp-server .
#   docker run -i --rm -v "$PWD:$PWD" -w "$PWD" acp-server --model echo
#
# The base is a build argument: any Debian-like image with python3 (>= 3.11, with the venv
# module) and useradd, e.g. `--build-arg PYTHON_IMAGE=python:3.12-slim` or a local base
# (docs/docker.md: how one was built). Both stages use the same base, so the venv matches its
# Python.
ARG PYTHON_IMAGE=python:3.11-slim

# ---- builder: wheels of the project and of its locked runtime dependencies --------------
# (--use-pep517: should a dependency be published as an sdist only, it is built in an isolated
# environment whatever the base's pip version.)
FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_PROGRESS_BAR=off \
    PYTHONDONTWRITEBYTECODE=1
# The build tools live in a venv of their own (Debian's system Python is "externally
# managed"); uv is only used to read uv.lock. Its version matches the lock's writer.
ARG UV_VERSION=0.13.9
RUN python3 -m venv /opt/build \
    && /opt/build/bin/pip install "uv==${UV_VERSION}"

WORKDIR /src
# The lock first: the dependency wheels stay cached while only the source changes.
COPY pyproject.toml uv.lock ./
RUN /opt/build/bin/uv export --frozen --no-dev --no-emit-project --format requirements.txt \
        --output-file /tmp/requirements.txt \
    && /opt/build/bin/pip wheel --use-pep517 --require-hashes --no-deps \
        -r /tmp/requirements.txt -w /wheels
COPY README.md ./
COPY acp_protocol ./acp_protocol
COPY acp_server ./acp_server
COPY acp_fixture ./acp_fixture
RUN /opt/build/bin/pip wheel --use-pep517 --no-deps . -w /wheels

# The runtime venv, installed from the wheels alone (--no-index: nothing fetched or built).
# pip and setuptools leave it again; the bytecode is recompiled as unchecked-hash .pyc files,
# which stay valid whatever mtimes the copy into the final stage gives the sources (a non-root
# user could not rewrite stale ones, and every start would compile in memory).
RUN python3 -m venv /opt/acp-server \
    && /opt/acp-server/bin/pip install --no-index --find-links /wheels acp-server \
    && /opt/acp-server/bin/pip uninstall --yes --quiet pip setuptools \
    && /opt/acp-server/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash \
        /opt/acp-server/lib

# ---- final: the base, that venv and a user; no source, no wheels, no pip, uv or compilers --
# The venv is copied rather than installed here: `RUN --mount=from=builder` would avoid a copy
# of the wheels too, but podman/buildah mount an empty stage when it comes from the cache
# (podman#16281). The venv is valid in the final stage because both stages start from the
# same PYTHON_IMAGE, so its `python` symlink and the interpreter are the same.
FROM ${PYTHON_IMAGE}
COPY --from=builder /opt/acp-server /opt/acp-server
# PID 1 is acp-server itself, not an init: it makes itself the child subreaper at start-up,
# so its tools' orphans are re-parented to it and reaped, and it handles SIGTERM (exit 0
# within 2 s), so the PID-1 rule "signals without a handler are ignored" does not bite once
# it runs. docs/docker.md explains the choice and when `docker run --init` is worth adding.
RUN useradd --create-home --uid 10001 --user-group --shell /usr/sbin/nologin agent \
    && install -d -o agent -g agent -m 1777 /home/agent/.local /home/agent/.local/share \
        /home/agent/.local/share/acp-server /home/agent/.config \
    && chmod 1777 /home/agent

# The default user is `agent` (uid 10001). Editors usually want `--user "$(id -u):$(id -g)"`
# so that edits in the mounted workspace belong to them: for such a uid, HOME stays
# /home/agent (else it would be /), and the home and the session data dir are writable by any
# uid, like /tmp (a one-user container; a named volume mounted on the data dir inherits it).
ENV PATH=/opt/acp-server/bin:$PATH \
    HOME=/home/agent
USER agent
WORKDIR /home/agent
ENTRYPOINT ["acp-server"]
