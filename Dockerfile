# Build stage: install dependencies and compile the single-file binary.
FROM oven/bun:1.4.5 AS build
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build

# Run stage: only the binary (it embeds the runtime and the migrations), run as an unprivileged user.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
  && useradd --system --uid 10001 --home-dir /srv --shell /usr/sbin/nologin switchyard \
  && mkdir -p /srv/data && chown switchyard:switchyard /srv/data
WORKDIR /srv
COPY --from=build /app/dist/switchyard /usr/local/bin/switchyard
# NODE_ENV=production: Bun.serve leaves development mode and Elysia skips building validation examples.
ENV NODE_ENV=production PORT=3000 DATABASE_URL=/srv/data/switchyard.sqlite
VOLUME /srv/data
EXPOSE 3000
USER switchyard
# `switchyard healthcheck` asks the gateway's /readyz on $PORT (the image has no curl).
HEALTHCHECK --interval=15s --timeout=6s --start-period=20s --retries=3 CMD ["switchyard", "healthcheck"]
CMD ["switchyard"]
