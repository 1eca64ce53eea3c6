#!/usr/bin/env bash
# The lead runs this once after all merges (`bun run house:format`): one import style (relative imports without
# ".ts"), then Biome's formatter and its safe lint fixes over the whole tree. Rerunning it changes nothing.
# After it, `bun run lint` should pass; what lint still reports is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

bun scripts/house-imports.ts
bunx biome format --write . >/dev/null
# Safe fixes only (type-only imports, an empty export); a second pass formats what the fixes touched.
bunx biome lint --write . >/dev/null 2>&1 || true
bunx biome format --write . >/dev/null
bunx biome ci --colors=off --max-diagnostics=0 . 2>&1 | tail -3 || true
git status --short | wc -l | xargs echo "files changed:"
