// The recorded wire transcripts (copied from shared/reference/fixtures so a clean clone works without shared/),
// plus a few synthesized ones in the same shapes (fixtures/synthesized/README.md). Loaded once, kept as bytes:
// the fake upstream serves them byte for byte and the tests compare bytes.

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const FIXTURES_DIR = new URL("./fixtures/", import.meta.url);
/** The shared originals, when the repo sits beside shared/ (as /work/main and the worktrees do). */
export const SHARED_FIXTURES_DIR = new URL("../../../shared/reference/fixtures/", import.meta.url);

export const RECORDED = [
  "A_count.json",
  "A_error_404.json",
  "A_nonstream.json",
  "A_stream_error.sse",
  "A_stream_text.sse",
  "A_stream_tool.sse",
  "B_error_429.json",
  "B_nonstream.json",
  "B_stream.sse",
  "B_stream_midstream_error.sse",
  "C_nonstream.json",
  "C_stream.sse",
  "C_stream_error.sse",
  "C_stream_failed.sse",
  "D_base64.json",
  "D_float.json",
] as const;

export const SYNTHESIZED = [
  "A_nonstream_search.json",
  "A_nonstream_thinking.json",
  "A_stream_search.sse",
  "A_stream_thinking.sse",
  "B_nonstream_reasoning.json",
  "B_stream_reasoning.sse",
  "B_nonstream_tool.json",
  "B_stream_cache.sse",
  "B_stream_tool.sse",
  "C_nonstream_reasoning.json",
  "C_nonstream_search.json",
  "C_nonstream_tool.json",
  "C_stream_reasoning.sse",
  "C_stream_search.sse",
  "C_stream_tool.sse",
] as const;

export type FixtureName = (typeof RECORDED)[number] | (typeof SYNTHESIZED)[number];

const cache = new Map<string, Uint8Array<ArrayBuffer>>();

export function fixtureBytes(name: FixtureName): Uint8Array<ArrayBuffer> {
  let b = cache.get(name);
  if (!b) {
    const dir = (SYNTHESIZED as readonly string[]).includes(name)
      ? new URL("synthesized/", FIXTURES_DIR)
      : FIXTURES_DIR;
    b = new Uint8Array(readFileSync(fileURLToPath(new URL(name, dir))));
    cache.set(name, b);
  }
  return b;
}

export function fixtureText(name: FixtureName): string {
  return new TextDecoder().decode(fixtureBytes(name));
}

export function fixtureJson(name: FixtureName): any {
  return JSON.parse(fixtureText(name));
}

/** The shared original of a recorded fixture, or null when shared/ is not beside the repo. */
export function sharedFixtureBytes(name: (typeof RECORDED)[number]): Uint8Array<ArrayBuffer> | null {
  const path = fileURLToPath(new URL(name, SHARED_FIXTURES_DIR));
  return existsSync(path) ? new Uint8Array(readFileSync(path)) : null;
}
