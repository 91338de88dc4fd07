# One image for the API (`quanta serve`), workers (`quanta worker`), beat (`quanta beat`),
# migrations (`quanta migrate`) and the agent (`quanta-agent run`); see docker-compose.yml.
FROM node:20-bookworm-slim AS ui
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# The Python environment, with the C extensions (setup.py) compiled: gcc stays in this stage.
FROM python:3.11-slim-bookworm AS build
ENV PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
COPY pyproject.toml setup.py README.md alembic.ini ./
COPY agent/ agent/
COPY backend/ backend/
COPY worker/ worker/
COPY migrations/ migrations/
# Editable: migrations/, alembic.ini and the UI are found next to the sources, and the
# extensions are built in place (backend/quanta/analysis/*.so). The image refuses to build
# without them: a slim image must not run the slow fallbacks unnoticed.
RUN find backend -name '*.so' -delete \
    && pip install --no-cache-dir -e '.[server]' \
    && python -c "from quanta.analysis import native; \
assert all(native.loaded().values()), native.summary(); print(native.summary())"

# The runtime: the same base, without a compiler; the venv and sources as built above.
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
COPY --from=ui /src/frontend/dist frontend/dist
# An unprivileged user owns the data, metrics and agent spool directories (the volumes).
RUN useradd --system --uid 10001 --home-dir /data quanta \
    && mkdir -p /data /var/lib/quanta/metrics /var/lib/quanta-agent \
    && chown quanta /data /var/lib/quanta/metrics /var/lib/quanta-agent
USER quanta
ENV QUANTA_HOST=0.0.0.0 QUANTA_DATA_DIR=/data QUANTA_METRICS_DIR=/var/lib/quanta/metrics
EXPOSE 8000
# Exec form: the process gets SIGTERM itself (uvicorn drains requests, Celery finishes tasks).
# Health checks are per service in docker-compose.yml (the API, a worker and beat differ).
STOPSIGNAL SIGTERM
CMD ["quanta", "serve"]
