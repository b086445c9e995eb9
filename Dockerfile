# syntax=docker/dockerfile:1
# Verdict's container image (docs/setup.md, "Containers"):
#   docker build -t verdict .
#   docker run -p 8787:8787 --env-file .env -v verdict-data:/app/data verdict
# Three stages: the dashboard's build (it needs dev dependencies), the production dependencies, and the
# runtime (Node 20 slim, production dependencies only, a non-root user, the data volume, a health check).
# scripts/container/build-steps.ts performs these steps on a machine without Docker, and
# test/integration/container.test.ts runs it: keep to what that script supports (it says what it refuses).

# --- 1. The dashboard (web/dist): Vite, Preact and Chart.js are dev dependencies, so it is built here.
FROM node:20-slim AS web
WORKDIR /app
COPY package.json package-lock.json ./
# No scripts: the root's `prepare` would build the dashboard before web/ is here (the next RUN does),
# and the dashboard's build runs no native code.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY web ./web
RUN npm run build:web

# --- 2. Production dependencies only.
FROM node:20-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts skips the root's `prepare` (the dashboard's build, which needs the dev dependencies
# this install leaves out); `npm rebuild` then runs the dependencies' own install scripts (better-sqlite3's
# prebuilt binary, esbuild's check), and never the root's `prepare`.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm rebuild

# --- 3. The runtime. The store's default place, ./data/verdict.sqlite (VERDICT_DB_PATH), is in the volume
# /app/data; with DATABASE_URL (compose.yaml) the store is PostgreSQL and the volume keeps evidence files.
FROM node:20-slim AS runtime
ENV NODE_ENV=production \
    PORT=8787 \
    HOST=0.0.0.0
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json app.yml ./
COPY bin ./bin
COPY src ./src
COPY --from=web /app/web/dist ./web/dist
# The data volume: the SQLite store and local evidence artifacts. It belongs to the runtime user so that
# a named volume mounted here starts out writable by it; the code stays root's, read-only to the server.
RUN mkdir -p data && chown 1000:1000 data
# 1000 is the node image's `node` user, given by number so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
VOLUME /app/data
EXPOSE 8787
# The image has neither curl nor wget: Node asks /health itself.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node itself is the container's main process (not npm), so `docker stop`'s SIGTERM reaches the server,
# which stops claiming and finishes its in-flight jobs. The worker service runs src/worker/main.ts instead.
CMD ["node", "--import", "tsx", "src/main.ts"]
