// The chat strip must remove exactly the usage-only event and leave every other byte identical, however the
// upstream cut the stream into chunks.
import { describe, expect, test } from "bun:test";
import { chat, isUsageOnlyEvent } from "../../src/llm/protocols/index";
import { fixtureBytes, fixtureText, type FixtureName } from "../fakes/fixtures";
import { concatBytes, splits } from "../fakes/chunking";

const enc = (s: string) => new TextEncoder().encode(s);

/** Run a strip-mode tap the way the proxy will: forward feed() ?? chunk, then flush(). */
function strip(parts: Uint8Array[]) {
  const tap = chat.createStreamTap({ stripUsageChunk: true });
  const out: Uint8Array[] = [];
  for (const c of parts) out.push(tap.feed(c) ?? c);
  const rest = tap.flush();
  if (rest) out.push(rest);
  return { bytes: concatBytes(out), result: tap.end() };
}

/** The fixture text without its one usage event (asserted to occur exactly once). */
function withoutUsageEvent(text: string): string {
  const events = text.split(/(?<=\n\n)/);
  const usage = events.filter((e) => e.includes('"choices":[]') && e.includes('"usage":{'));
  expect(usage).toHaveLength(1);
  return events.filter((e) => e !== usage[0]).join("");
}

describe("chat usage-chunk strip", () => {
  for (const name of ["B_stream.sse", "B_stream_cache.sse", "B_stream_tool.sse"] as FixtureName[]) {
    test(`${name}: exactly the usage event goes, at every split`, () => {
      const want = enc(withoutUsageEvent(fixtureText(name)));
      expect(want.length).toBeLessThan(fixtureBytes(name).length);
      for (const parts of splits(fixtureBytes(name))) {
        const { bytes, result } = strip(parts);
        expect(bytes).toEqual(want);
        expect(result.usage).not.toBeNull(); // the tap still read the usage it removed
        expect(result.completed).toBe(true);
      }
    });
  }

  test("B_stream.sse: the stripped stream has 7 output tokens metered and no usage for the client", () => {
    const { bytes, result } = strip([fixtureBytes("B_stream.sse")]);
    expect(result.usage).toEqual({ input: 19, cacheRead: 0, cacheWrite: 0, output: 7 });
    expect(new TextDecoder().decode(bytes)).not.toContain('"usage":{');
    expect(new TextDecoder().decode(bytes).endsWith("data: [DONE]\n\n")).toBe(true);
  });

  for (const [label, eol] of [
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ]) {
    test(`${label} line ends: same guarantee`, () => {
      const input = fixtureText("B_stream.sse").replaceAll("\n", eol!);
      const want = enc(withoutUsageEvent(fixtureText("B_stream.sse")).replaceAll("\n", eol!));
      for (const parts of splits(enc(input), 50)) {
        const { bytes, result } = strip(parts);
        expect(bytes).toEqual(want);
        expect(result.usage?.output).toBe(7);
      }
    });
  }

  test("a stream without a usage chunk (error) passes through byte for byte", () => {
    const b = fixtureBytes("B_stream_midstream_error.sse");
    for (const parts of splits(b, 20)) {
      const { bytes, result } = strip(parts);
      expect(bytes).toEqual(b);
      expect(result.failed).toBe(true);
    }
  });

  test("an incomplete last event is held, then handed back by flush()", () => {
    const tap = chat.createStreamTap({ stripUsageChunk: true });
    expect(tap.feed(enc('data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: {"cho'))).toEqual(
      enc('data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'),
    );
    expect(tap.flush()).toEqual(enc('data: {"cho'));
    expect(tap.flush()).toBeNull();
  });

  test("chunks that end on event boundaries go through untouched (null), no copy", () => {
    const tap = chat.createStreamTap({ stripUsageChunk: true });
    expect(tap.feed(enc('data: {"choices":[{"delta":{"content":"hi"}}],"usage":null}\n\n'))).toBeNull();
    // after the usage chunk is gone the strip steps aside
    expect(tap.feed(enc('data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\n'))).toEqual(
      new Uint8Array(0),
    );
    expect(tap.feed(enc("data: [DONE]\n\n"))).toBeNull();
    expect(tap.end()).toMatchObject({ completed: true, usage: { input: 1, output: 1 } });
  });

  test("without strip the chat tap never touches bytes", () => {
    const tap = chat.createStreamTap({ stripUsageChunk: false });
    expect(tap.feed(fixtureBytes("B_stream.sse"))).toBeNull();
  });

  test("isUsageOnlyEvent: empty choices and a usage object, spacing tolerated", () => {
    expect(isUsageOnlyEvent('data: {"choices": [ ],"usage": {"prompt_tokens":1}}\n\n')).toBe(true);
    expect(isUsageOnlyEvent('data: {"choices":[{"index":0}],"usage":{"prompt_tokens":1}}\n\n')).toBe(false);
    expect(isUsageOnlyEvent('data: {"choices":[],"usage":null}\n\n')).toBe(false);
  });
});
