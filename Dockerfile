# Build stage: install dependencies and compile the single-file binary.
FROM oven/bun:1.4.5 AS build
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build

# Run stage: only the binary (it embeds the runtime and the migrations).
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /srv
COPY --from=build /app/dist/switchyard /usr/local/bin/switchyard
ENV PORT=3000 DATABASE_URL=/srv/data/switchyard.sqlite
VOLUME /srv/data
EXPOSE 3000
CMD ["switchyard"]
