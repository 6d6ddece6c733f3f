# qipai serve in a container (docs/howto/run-in-production.md).
#
#   docker build -t qipai .
#   docker run -d --name qipai -p 127.0.0.1:8000:8000 \
#       -v qipai-data:/data -v "$PWD/keys:/keys:ro" qipai
#
# The image runs `qipai serve` as the unprivileged user qipai (uid 10001) on
# 0.0.0.0:8000 with the SQLite database in the volume /data and the operator
# keys read from /keys/keys.json (a folder mounted, not the file: `qipai keys`
# replaces the file, which a mounted file would not show); the arguments after
# the image name replace the CMD (e.g. --db postgresql://… — see compose.yaml).
# Installed from uv.lock with the `serve` extra (PostgreSQL's driver included).

# The Python image; another with Python 3.11 at python3 may be given
# (docker build --build-arg PYTHON_IMAGE=…).
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
# uv, from PyPI, pinned
RUN python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir uv==0.13.9
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/venv
WORKDIR /src
# the locked dependencies first (a layer kept while only the code changes)
COPY pyproject.toml uv.lock README.md ./
RUN /opt/uv/bin/uv sync --locked --no-default-groups --extra serve --no-install-project \
        --python python3
COPY qipai ./qipai
RUN /opt/uv/bin/uv sync --locked --no-default-groups --extra serve --no-editable \
        --python python3

FROM ${PYTHON_IMAGE}
RUN groupadd --system --gid 10001 qipai \
    && useradd --system --uid 10001 --gid qipai --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin qipai \
    && mkdir -p /data /keys && chown qipai:qipai /data
COPY --from=build /app/venv /app/venv
# QIPAI_HEALTH_URL: what the HEALTHCHECK asks (set it with -e when --port is not 8000)
ENV PATH=/app/venv/bin:$PATH PYTHONUNBUFFERED=1 QIPAI_HEALTH_URL=http://127.0.0.1:8000/health
USER qipai
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
# /health answers 200 while the server serves (503: its database stalled or lost)
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen(os.environ['QIPAI_HEALTH_URL'], timeout=4)"]
ENTRYPOINT ["qipai", "serve"]
CMD ["--host", "0.0.0.0", "--port", "8000", "--db", "sqlite:////data/qipai.db", \
     "--keys", "/keys/keys.json", "--log-format", "json"]
