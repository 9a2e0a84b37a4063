# syntax=docker/dockerfile:1
# edge-api image: `docker build -t edge-api:local .` (compose/docker-compose.yml builds it too).
# Node 24 is the current Active LTS; the code also runs on Node 20 (CI), see package.json engines.
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: dev dependencies (esbuild) compile src/ into dist/ ---------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# .npmrc carries ignore-scripts=true: no dependency install script runs, here or below.
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
# scripts/bundle.ts compiles src/ module by module, then bundles it into one file with a V8
# code cache made by this image's Node, which the runtime stage shares (a faster start:
# docs/performance.md). Type errors are CI's `npm run typecheck`, before any image is built.
COPY scripts/bundle.ts scripts/main-loader.js ./scripts/
RUN npm run build
# Build identity: the commit and time this image is built from, given as build arguments
#   docker build --build-arg GIT_COMMIT="$(git rev-parse HEAD)" \
#     --build-arg BUILD_TIME="$(date -u +%Y-%m-%dT%H:%M:%SZ)" -t edge-api:local .
# and written beside the compiled code, where the service reads them at start
# (src/build-info.ts): nothing reads a .git at run time. Declared after the compile, so a new
# commit does not invalidate the cached layers above.
ARG GIT_COMMIT=""
ARG BUILD_TIME=""
RUN node -e "require('node:fs').writeFileSync('dist/build-info.json', JSON.stringify({ commit: process.env.GIT_COMMIT, build_time: process.env.BUILD_TIME }) + '\n')"

# --- production dependencies only --------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime -------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root, run as `node`: the process cannot modify its own code or dependencies.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json carries "type": "module", which dist/*.js needs.
COPY package.json ./
USER node
EXPOSE 18080
# Liveness only (/healthz never touches the chain and stays 200 while draining), so Docker
# never marks a replica unhealthy because the chain is down. The slim image has no curl or
# wget: node itself makes the request.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.EDGE_API_PORT || '18080') + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form, no shell and no npm in between: SIGTERM reaches node, which drains and exits 0.
CMD ["node", "dist/main.js"]
