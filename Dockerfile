# acp-server speaks ACP on stdin/stdout: run it with `docker run -i` so stdin stays open.
ARG PYTHON_IMAGE=python:3.11-slim
FROM ${PYTHON_IMAGE}

# A virtual environment keeps the install apart from the base's system Python (which Debian
# marks as externally managed).
RUN python3 -m venv /opt/acp-server \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin agent

COPY pyproject.toml uv.lock README.md /src/
COPY protocol /src/protocol
COPY acp_server /src/acp_server
RUN /opt/acp-server/bin/pip install --no-cache-dir /src && rm -rf /src

ENV PATH=/opt/acp-server/bin:$PATH
USER agent
WORKDIR /home/agent
ENTRYPOINT ["acp-server"]
