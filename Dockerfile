# One image for the API, the worker and beat (and the agent, which needs only a subset).
FROM node:20-bookworm-slim AS ui
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim-bookworm
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY agent/ agent/
COPY backend/ backend/
COPY worker/ worker/
COPY migrations/ migrations/
RUN pip install --no-cache-dir -e '.[server]'
COPY --from=ui /src/frontend/dist frontend/dist
ENV QUANTA_HOST=0.0.0.0 QUANTA_DATA_DIR=/data
EXPOSE 8000
CMD ["quanta", "serve"]
