# syntax=docker/dockerfile:1
# mailgate as a container: `mailgate serve` (HTTP API, web page, IMAP) on an external
# PostgreSQL (DATABASE_URL). Built by docker-compose.yml; dependencies are installed here, in
# the image, never through a bind mount from the host.

FROM node:20-bookworm AS build
WORKDIR /app
# The whole tree (.dockerignore leaves out node_modules, .git and outputs): npm ci needs every
# workspace's package.json, and serve needs packages/ and migrations/.
COPY . .
# Production dependencies only, exactly as locked (the full image has the compilers a
# native module may need; the runtime image below does not).
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    MAILGATE_HOME=/var/lib/mailgate \
    HOST=0.0.0.0 \
    PORT=3000 \
    IMAP_HOST=0.0.0.0 \
    IMAP_PORT=1143
WORKDIR /app
COPY --from=build /app /app
# A non-root user owns the state folder (embedded PostgreSQL, when DATABASE_URL is unset).
RUN mkdir -p /var/lib/mailgate && chown node:node /var/lib/mailgate
USER node
EXPOSE 3000 1143
ENTRYPOINT ["node", "packages/cli/bin/mailgate.js"]
CMD ["serve"]
