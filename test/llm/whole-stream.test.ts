// A whole chat stream read without the tap (sse-whole.ts) must give the client the very bytes the tap and its strip
// would, and the verdict the tap would; whenever the bytes leave doubt it must step aside (null), so the tap decides.
import { describe, expect, test } from "bun:test";
import { chat } from "../../src/llm/protocols/index";
import { fixtureBytes, fixtureText, type FixtureName } from "../fakes/fixtures";
import { concatBytes, rng } from "../fakes/chunking";

const enc = (s: string) => new TextEncoder().encode(s);

function viaTap(bytes: Uint8Array, stripUsageChunk: boolean) {
  const tap = chat.createStreamTap({ stripUsageChunk });
  const out = [tap.feed(bytes) ?? bytes];
  const rest = tap.flush();
  if (rest) out.push(rest);
  return { bytes: concatBytes(out), tapped: tap.end() };
}

/** Asserts the fast path agrees with the tap when it answers; returns whether it answered. */
function agrees(bytes: Uint8Array, stripUsageChunk: boolean): boolean {
  const whole = chat.wholeStream!(bytes.slice(), { stripUsageChunk }); // a cut is made in place
  if (whole === null) return false;
  const want = viaTap(bytes, stripUsageChunk);
  expect(whole.bytes).toEqual(want.bytes);
  expect(whole.tapped.usage).toEqual(want.tapped.usage);
  expect(whole.tapped.completed).toBe(want.tapped.completed);
  expect(whole.tapped.failed).toBe(want.tapped.failed);
  expect(want.tapped.error).toBeUndefined();
  return true;
}

const CHAT_STREAMS: FixtureName[] = [
  "B_stream.sse",
  "B_stream_cache.sse",
  "B_stream_tool.sse",
  "B_stream_reasoning.sse",
];

describe("a whole chat stream without the tap", () => {
  for (const name of CHAT_STREAMS)
    for (const strip of [true, false])
      test(`${name}, strip ${strip}: taken, same bytes and usage as the tap`, () => {
        expect(agrees(fixtureBytes(name), strip)).toBe(true);
      });

  test("the usage-only event is what goes, and only when the gateway asked for it", () => {
    const bytes = fixtureBytes("B_stream.sse").slice(); // the cache's copy stays whole
    const stripped = chat.wholeStream!(bytes.slice(), { stripUsageChunk: true })!;
    expect(new TextDecoder().decode(stripped.bytes)).not.toContain('"usage":{');
    expect(stripped.tapped.usage).toEqual({ input: 19, cacheRead: 0, cacheWrite: 0, output: 7 });
    expect(chat.wholeStream!(bytes, { stripUsageChunk: false })!.bytes).toBe(bytes);
  });

  const text = fixtureText("B_stream.sse");
  const usageEvent = text.split(/(?<=\n\n)/).find((e) => e.includes('"usage":{'))!;
  const doubtful: [string, string][] = [
    ["CRLF line ends", text.replaceAll("\n", "\r\n")],
    ["a BOM", `\uFEFF${text}`],
    [
      "an error event",
      `${text.replace("data: [DONE]\n\n", "")}data: {"error":{"message":"x","type":"server_error"}}\n\n`,
    ],
    ["two usage objects", text.replace(usageEvent, usageEvent + usageEvent)],
    ["no usage", text.replace(usageEvent, "")],
    [
      "usage in an event of two data lines",
      text.replace(usageEvent, usageEvent.replace('"usage":', '\ndata: "usage":')),
    ],
    ["usage after an event field", text.replace(usageEvent, `event: x\n${usageEvent}`)],
    ["usage that does not parse", text.replace(usageEvent, usageEvent.replace('"usage":{', '"usage":{,'))],
    ["usage in an unfinished last event", `${text.replace(usageEvent, "")}${usageEvent.trimEnd()}`],
    [
      "usage null first in the same event",
      text.replace(usageEvent, usageEvent.replace("data: {", 'data: {"usage":null,')),
    ],
  ];
  for (const [label, body] of doubtful)
    test(`${label}: left to the tap`, () => {
      expect(chat.wholeStream!(enc(body), { stripUsageChunk: true })).toBeNull();
      expect(chat.wholeStream!(enc(body), { stripUsageChunk: false })).toBeNull();
    });

  // Streams made of the fixtures' events and odd pieces in random order: wherever the fast path answers, it agrees.
  test("random streams: it answers only where it agrees with the tap", () => {
    const events = CHAT_STREAMS.flatMap((n) => fixtureText(n).split(/(?<=\n\n)/));
    const odd = [
      "\n",
      ": a comment\n\n",
      'data:{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}\n\n',
      'data: {"choices":[],"usage" : {"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}\n\n',
      'data: {"choices":[{"delta":{"content":"\\"usage\\":{ and \\"error\\""}}],"usage":null}\n\n',
      'data: {"choices":[{"delta":{"content":"é✓"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n',
      "data: [DONE]\n\n",
      'data: {"usage":{}}\n\n',
      // the usage-only test, read from the bytes: spaces, a tab, a key in a string, a choice, choices after usage
      'data: {"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3},"choices": [ ]}\n\n',
      'data: {"choices" :[\t],"usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4}}\n\n',
      'data: {"x":"\\"choices\\":[]","choices":[{"index":0}],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}\n\n',
      'data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5},"choices":[1]}\n\n',
      'data: {"choices":\n\n',
      // the event's bounds: a usage key split over two lines, a field after the usage line
      'data: {"usage"\n:{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n',
      'data: {"choices":[],"usage":{"prompt_tokens":6,"completion_tokens":1,"total_tokens":7}}\nid: 9\n\n',
      "id: 7\n",
      "\n\n\n",
    ];
    const next = rng(25);
    let answered = 0;
    for (let i = 0; i < 3000; i++) {
      const parts: string[] = [];
      const n = 1 + Math.floor(next() * 8);
      for (let k = 0; k < n; k++) {
        const pool = next() < 0.7 ? events : odd;
        parts.push(pool[Math.floor(next() * pool.length)]!);
      }
      const bytes = enc(parts.join(""));
      if (agrees(bytes, next() < 0.5)) answered++;
    }
    expect(answered).toBeGreaterThan(300); // the property is not vacuous
  });
});
