// Every stream fixture, cut every way, must give the exact usage it states (numbers read off the fixtures).
import { describe, expect, test } from "bun:test";
import { protocols, type ProtocolName, type TapResult } from "../../src/llm/protocols/index";
import { fixtureBytes, type FixtureName } from "../fakes/fixtures";
import { splits } from "../fakes/chunking";

function run(p: ProtocolName, parts: Uint8Array[]): TapResult {
  const tap = protocols[p].createStreamTap({ stripUsageChunk: false });
  for (const c of parts) expect(tap.feed(c)).toBeNull(); // watch-only taps never touch bytes
  expect(tap.flush()).toBeNull();
  return tap.end();
}

const cases: [ProtocolName, FixtureName, TapResult][] = [
  [
    "anthropic",
    "A_stream_text.sse",
    {
      usage: { input: 21, cacheWrite: 1450, cacheRead: 0, output: 12 },
      failed: false,
      completed: true,
      outputCharsSoFar: 32,
    },
  ],
  [
    "anthropic",
    "A_stream_tool.sse",
    {
      usage: { input: 472, cacheWrite: 0, cacheRead: 0, output: 89 },
      failed: false,
      completed: true,
      outputCharsSoFar: 97,
    },
  ],
  // Failure: usage is what message_start stated, its output placeholder (1) never restated, so the estimate from the
  // 9 characters seen (3); the proxy releases anyway.
  [
    "anthropic",
    "A_stream_error.sse",
    {
      usage: { input: 15, cacheWrite: 0, cacheRead: 0, output: 3 },
      failed: true,
      error: { type: "overloaded_error", message: "Overloaded" },
      completed: false,
      outputCharsSoFar: 9,
    },
  ],
  [
    "chat",
    "B_stream.sse",
    {
      usage: { input: 19, cacheRead: 0, cacheWrite: 0, output: 7 },
      failed: false,
      completed: true,
      outputCharsSoFar: 22,
    },
  ],
  [
    "chat",
    "B_stream_cache.sse",
    {
      usage: { input: 135, cacheRead: 1408, cacheWrite: 0, output: 7 },
      failed: false,
      completed: true,
      outputCharsSoFar: 22,
    },
  ],
  [
    "chat",
    "B_stream_tool.sse",
    {
      usage: { input: 82, cacheRead: 0, cacheWrite: 0, output: 17 },
      failed: false,
      completed: true,
      outputCharsSoFar: 28,
    },
  ],
  [
    "chat",
    "B_stream_midstream_error.sse",
    {
      usage: null,
      failed: true,
      error: {
        type: "server_error",
        message: "The server had an error while processing your request. Sorry about that!",
      },
      completed: false,
      outputCharsSoFar: 0,
    },
  ],
  [
    "responses",
    "C_stream.sse",
    {
      usage: { input: 168, cacheRead: 1152, cacheWrite: 0, output: 8 },
      failed: false,
      completed: true,
      outputCharsSoFar: 25,
    },
  ],
  [
    "responses",
    "C_stream_tool.sse",
    {
      usage: { input: 310, cacheRead: 0, cacheWrite: 0, output: 19 },
      failed: false,
      completed: true,
      outputCharsSoFar: 28,
    },
  ],
  [
    "responses",
    "C_stream_error.sse",
    {
      usage: null,
      failed: true,
      error: {
        code: "rate_limit_exceeded",
        message: "Rate limit reached for gpt-4.1 on tokens per min (TPM). Please try again in 1.2s.",
      },
      completed: false,
      outputCharsSoFar: 0,
    },
  ],
  [
    "responses",
    "C_stream_failed.sse",
    {
      usage: null,
      failed: true,
      error: { code: "server_error", message: "The model failed to generate a response." },
      completed: false,
      outputCharsSoFar: 0,
    },
  ],
];

describe("stream taps on the fixtures, split at every offset and at random", () => {
  for (const [p, name, want] of cases) {
    test(`${p} ${name}`, () => {
      const bytes = fixtureBytes(name);
      let n = 0;
      for (const parts of splits(bytes)) {
        expect(run(p, parts)).toEqual(want);
        n++;
      }
      expect(n).toBeGreaterThan(bytes.length);
    });
  }
});

describe("tap edge cases", () => {
  const enc = (s: string) => new TextEncoder().encode(s);

  test("anthropic: message_delta replaces input counts when non-null, output is the last total, never a sum", () => {
    const s =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":7,"output_tokens":1}}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","delta":{},"usage":{"output_tokens":30}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","delta":{},"usage":{"input_tokens":12,"cache_read_input_tokens":null,"output_tokens":50}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    expect(run("anthropic", [enc(s)]).usage).toEqual({ input: 12, cacheWrite: 5, cacheRead: 7, output: 50 });
  });

  test("anthropic: an output count never restated by a message_delta (message_start's placeholder) gives way to the content's estimate", () => {
    const start =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}\n\n';
    const delta = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${"x".repeat(80)}"}}\n\n`;
    const stop = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    const restated = 'event: message_delta\ndata: {"type":"message_delta","delta":{},"usage":{"output_tokens":5}}\n\n';
    expect(run("anthropic", [enc(start + delta + stop)])).toMatchObject({
      completed: true,
      usage: { input: 10, output: 20 },
    });
    // stated totals are taken as stated, even below what the characters suggest
    expect(run("anthropic", [enc(start + delta + restated + stop)]).usage).toMatchObject({ input: 10, output: 5 });
  });

  test("anthropic: thinking deltas count, signatures do not; escapes count as one character", () => {
    const s =
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a\\"b\\u00e9"}}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}\n\n';
    expect(run("anthropic", [enc(s)]).outputCharsSoFar).toBe(4);
  });

  test("a cut stream is neither completed nor failed", () => {
    const b = fixtureBytes("A_stream_text.sse");
    const r = run("anthropic", [b.subarray(0, 700)]);
    expect(r).toMatchObject({ completed: false, failed: false, usage: { input: 21, cacheWrite: 1450, output: 1 } });
    expect(run("chat", [fixtureBytes("B_stream.sse").subarray(0, 900)])).toMatchObject({
      completed: false,
      failed: false,
      usage: null,
    });
  });

  test("responses: response.incomplete is a normal, billable end", () => {
    const s =
      'event: response.incomplete\ndata: {"type":"response.incomplete","response":{"status":"incomplete","usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":10},"output_tokens":16}}}\n\n';
    expect(run("responses", [enc(s)])).toEqual({
      usage: { input: 40, cacheRead: 10, cacheWrite: 0, output: 16 },
      failed: false,
      completed: true,
      outputCharsSoFar: 0,
    });
  });

  test("a malformed usage event loses metering for that event, never throws into the stream", () => {
    const s = 'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":10\n\n';
    expect(run("anthropic", [enc(s)])).toMatchObject({ usage: null, failed: false });
  });

  test("multi-byte characters split across chunks still count once", () => {
    const s = 'data: {"choices":[{"index":0,"delta":{"content":"héllo ✓"}}]}\n\n';
    const b = enc(s);
    const at = s.indexOf("✓") + 2; // inside the 3-byte sequence
    expect(run("chat", [b.subarray(0, at), b.subarray(at)]).outputCharsSoFar).toBe(7);
  });
});
