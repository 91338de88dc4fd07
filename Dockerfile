# One image for the API (`quanta serve`), workers (`quanta worker`), beat (`quanta beat`),
# migrations (`quanta migrate`) and the agent (`quanta-agent run`); see docker-compose.yml.
FROM node:20-bookworm-slim AS ui
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY agent/ agent/
COPY backend/ backend/
COPY worker/ worker/
COPY migrations/ migrations/
# Editable: migrations/, alembic.ini and the UI are found next to the sources.
RUN pip install --no-cache-dir -e '.[server]'
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
