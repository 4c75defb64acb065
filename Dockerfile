# syntax=docker/dockerfile:1
# One image for both roles of gameai, chosen by the command:
#   docker run gameai                                   -> gameai serve (REST 8000, gRPC 50051)
#   docker run gameai trainer --game tictactoe ...      -> the self-play worker (metrics 9100)
# Dependencies come from constraints.txt (pinned); the gRPC code is generated from proto/ at
# build time; the process runs as an unprivileged user and works on a read-only root
# filesystem as long as /tmp is writable (numba's cache, solver tables).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---------------------------------------------------------------------------------- build
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CONSTRAINT=/src/constraints.txt \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src

# Build tools live in their own venv so they never reach the runtime image. EXTRAS names
# optional dependencies to add (--build-arg EXTRAS=ray: the Ray cluster's image, whose
# nodes run `ray start` and the trainer's actors; deploy/docker-compose.yml, profile ray).
ARG EXTRAS=""
COPY constraints.txt pyproject.toml ./
RUN python -m venv /opt/tools \
    && /opt/tools/bin/pip install --no-cache-dir grpcio-tools setuptools wheel \
    && python -m venv /opt/gameai \
    && python -c "import os, tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; extras = [e for e in os.environ.get('EXTRAS', '').split(',') if e]; print('\n'.join(p['dependencies'] + [d for e in extras for d in p['optional-dependencies'][e]]))" > /tmp/requirements.txt \
    && /opt/gameai/bin/pip install --no-cache-dir -r /tmp/requirements.txt

# The application: generate the gRPC code from proto/, then build and install the wheel.
COPY README.md ./
COPY proto ./proto
COPY gameai ./gameai
RUN rm -rf gameai/service/gen gameai/stress \
    && /opt/tools/bin/python -m gameai.service.protogen \
    && /opt/tools/bin/pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /tmp/wheels . \
    && /opt/gameai/bin/pip install --no-cache-dir --no-deps /tmp/wheels/gameai-*.whl \
    && /opt/gameai/bin/python -c "import gameai.service.gen.gameai.v1.move_pb2_grpc, gameai.cli"

# -------------------------------------------------------------------------------- runtime
FROM ${PYTHON_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="gameai" \
      org.opencontainers.image.description="Game-AI move service: learns m,n,k board games by self-play and serves moves over gRPC and REST" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.documentation="docs/operations.md"

RUN groupadd --system --gid 10001 gameai \
    && useradd --system --uid 10001 --gid gameai --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin gameai \
    && install -d -o gameai -g gameai -m 0750 /var/lib/gameai

COPY --from=build /opt/gameai /opt/gameai
COPY --chmod=0755 deploy/docker/healthcheck.py /usr/local/bin/gameai-healthcheck

ENV PATH=/opt/gameai/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    NUMBA_CACHE_DIR=/tmp/numba-cache \
    GAMEAI_HOST=0.0.0.0 \
    GAMEAI_DATA_DIR=/var/lib/gameai \
    GAMEAI_CACHE_DIR=/tmp/gameai-cache

USER 10001:10001
WORKDIR /var/lib/gameai
EXPOSE 8000 50051 9100

# Alive = /healthz answers on the port of the role this container runs (server or trainer).
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
    CMD ["gameai-healthcheck"]
# Both roles drain on SIGTERM (the server finishes in-flight requests within its grace period).
STOPSIGNAL SIGTERM

ENTRYPOINT ["gameai"]
CMD ["serve"]
