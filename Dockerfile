# Switchyard's image: TypeScript compiled at build time, `node dist/...` at run time, as the
# non-root user `node`. docker-compose.yml runs it twice: the API (the CMD below) and the worker
# (`node dist/worker.js`). test/integration/image-steps.test.ts runs this file's npm steps in a clean
# copy of the repository, so keep every RUN a plain command it can read.

# better-sqlite3 (the SQLite store) compiles its native module when no prebuilt binary fits.
FROM node:20-bookworm-slim AS toolchain
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./

# Compile: tsc to dist/, then the workflow bundle the worker loads instead of bundling at start.
FROM toolchain AS build
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/transpile-source.js ./scripts/
COPY src ./src
RUN npm run build

# Only what runs: no TypeScript, no test tools.
FROM toolchain AS deps
RUN npm ci --omit=dev

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# With DATABASE_URL (PostgreSQL) nothing is written on local disk, and the root filesystem may be
# read-only. Without it the SQLite store lives in DATA_DIR: a volume the `node` user owns.
RUN mkdir -p /data && chown node:node /data
ENV DATA_DIR=/data
# A container's loopback is its own: listen on every interface so the published port reaches the API
# (and a worker's /metrics). Outside a container HOST defaults to 127.0.0.1.
ENV HOST=0.0.0.0
VOLUME ["/data"]
USER node
EXPOSE 8080
# Ready means this API can take ingestion: it answers, and its store and Temporal do, whatever the
# workers do (src/api/health.ts; monitoring reads /admin/status). Node's own fetch: the slim image has no curl.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/server.js"]
