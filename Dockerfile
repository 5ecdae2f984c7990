# petstore in a container: docker build -t petstore . && docker run -p 8080:8080 -v petstore-data:/var/lib/petstore petstore
# (docs/operations.md, "The command, containers and systemd"). Node 22 LTS by default: `--build-arg NODE_VERSION=24` for the next LTS.
ARG NODE_VERSION=22

# Build: every dependency, the compiled dist/, then the development dependencies removed again.
FROM node:${NODE_VERSION}-bookworm-slim AS build
# better-sqlite3 compiles from source where no prebuilt binary fits this Node: python3, make and g++.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
# npm ci runs the prepare script, which compiles src/ into dist/; pruning keeps the compiled better-sqlite3.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

# Run: the same base (so the native module matches), the code owned by root and read-only to the service.
FROM node:${NODE_VERSION}-bookworm-slim
ENV HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=/var/lib/petstore/petstore.db
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The SQLite file lives on a volume; the image's `node` user (uid 1000) owns it. With PostgreSQL
# (DATABASE_URL=postgres://…) the volume stays empty.
RUN mkdir -p /var/lib/petstore && chown node:node /var/lib/petstore
VOLUME ["/var/lib/petstore"]
USER node
EXPOSE 8080
# Node, not curl (the slim image has none): 0 when /healthz answers 200. Over HTTPS when TLS_CERT is set;
# the certificate is for the public name, not 127.0.0.1, so it is not verified for this local probe.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "require(process.env.TLS_CERT ? 'node:https' : 'node:http').get({ host: '127.0.0.1', port: process.env.PORT, path: '/healthz', rejectUnauthorized: false, timeout: 4000 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1)).on('timeout', () => process.exit(1))"]
# node itself, not `npm start`: npm does not pass SIGTERM on, and the server would outlive it. As PID 1,
# node gets only the signals it handles, and it handles SIGTERM and SIGINT (src/process/signals.ts: stop
# accepting, finish in-flight requests, close the database, exit 0). It starts no processes but its own
# cluster workers (`serve --workers N`), which it reaps, so no init (tini, `docker run --init`) is needed;
# one does no harm. The stop may take up to 10 s: give `docker stop` more (`--stop-timeout 15`).
STOPSIGNAL SIGTERM
CMD ["node", "dist/cli.js", "serve"]
