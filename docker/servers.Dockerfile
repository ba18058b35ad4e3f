# The reference servers (GraphQL, gRPC and Connect) in one image; docker-compose.yml
# picks the server with `command`. Build context: the repository root.
#   docker build -f docker/servers.Dockerfile -t k6pack-servers .
#   docker run --rm -p 127.0.0.1:4000:4000 k6pack-servers node servers/graphql/server.js

# The Node version the pack is developed and tested with (Node 24 LTS; package.json's engines: 22.15 or newer).
FROM node:24.22.3-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# Only what the servers load: their code and contracts, and the shared pure modules
# they import (common/) (test/compose.test.js checks every server import is copied).
COPY common/ common/
COPY servers/ servers/
COPY docker/healthcheck.js docker/
# The image's unprivileged user; the files above stay root-owned and read-only to it.
USER node
# Listen on every interface of the container; publish on 127.0.0.1 only (compose does).
ENV HOST=0.0.0.0
EXPOSE 4000 4443 4444 5051 5052 5053 6080 6081 6443
CMD ["node", "servers/graphql/server.js"]
