// A body the gateway edits on its way upstream (protocols/common.ts SplicedBody: chat's include_usage, the upstream's
// model name) is put together in one shared buffer when handed to fetch. That is safe only because fetch copies the
// bytes it is given before it returns: held here against a server, with the buffer written over at once, and with
// many edited bodies of different sizes in flight together; and the edits themselves against plain string splicing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { withUpstreamModel } from "../../src/llm/body";
import { sendable, SplicedBody, splicedBytes } from "../../src/llm/protocols/common";
import { random } from "../support/random-json";

const bytesOf = (s: string) => new Uint8Array(Buffer.from(s));
const textOf = (b: Uint8Array) => new TextDecoder().decode(b);

let server: Server<undefined>;
beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      return new Response(await req.text());
    },
  });
});
afterAll(() => server.stop(true));

const post = (body: string | Uint8Array) => fetch(`http://127.0.0.1:${server.port}/`, { method: "POST", body });

describe("fetch takes a copy of the shared buffer", () => {
  test("the buffer written over right after the call: each request carries its own bytes", async () => {
    const a = splicedBytes(bytesOf(`{"x":"${"a".repeat(200_000)}"}`), 1, 0, '"first":1,');
    const b = splicedBytes(bytesOf(`{"y":"${"b".repeat(150_000)}é"}`), 1, 0, '"second":2,');
    const sentA = post(sendable(a));
    const sentB = post(sendable(b)); // the same buffer, written over
    expect(await (await sentA).text()).toBe(textOf(a.toBytes()));
    expect(await (await sentB).text()).toBe(textOf(b.toBytes()));
  });

  test("many edited bodies of different sizes in flight together", async () => {
    const bodies = Array.from({ length: 40 }, (_, i) =>
      splicedBytes(
        bytesOf(`{"n":${i},"t":"${String.fromCharCode(97 + (i % 26)).repeat(1000 + i * 7919)}"}`),
        1,
        0,
        `"i":${i},`,
      ),
    );
    const answers = await Promise.all(bodies.map(async (b) => (await post(sendable(b))).text()));
    answers.forEach((text, i) => expect(text).toBe(textOf(bodies[i]!.toBytes())));
  });

  test("a body over the shared buffer's limit is a copy of its own", () => {
    const big = splicedBytes(bytesOf(`{"x":"${"z".repeat(1_200_000)}"}`), 1, 0, '"k":1,');
    const small = splicedBytes(bytesOf('{"x":1}'), 1, 0, '"k":1,');
    const first = sendable(big) as Uint8Array;
    sendable(small);
    expect(textOf(first)).toBe(textOf(big.toBytes()));
  });
});

describe("edits", () => {
  test("random edits put together as string splicing would", () => {
    for (let seed = 1; seed <= 500; seed++) {
      const r = random(seed);
      const text = Array.from({ length: 1 + r.int(60) }, () => r.pick(["a", "é", "漢", "😀", '"', "{"])).join("");
      const bytes = bytesOf(text);
      // non-overlapping edits at character boundaries, applied in random order
      const cuts = [...new Set(Array.from({ length: r.int(4) }, () => r.int([...text].length + 1)))].sort(
        (x, y) => x - y,
      );
      const edits = cuts.map((at, k) => {
        const next = k + 1 < cuts.length ? cuts[k + 1]! : [...text].length;
        return { at, removed: r.int(next - at + 1), insert: r.pick(["", "X", "ü", '"m":"n",']) };
      });
      const want = [...text];
      for (const e of [...edits].reverse()) want.splice(e.at, e.removed, ...e.insert);
      const byteAt = (chars: number) => Buffer.byteLength([...text].slice(0, chars).join(""));
      let spliced = new SplicedBody(bytes, []);
      for (const e of [...edits].sort(() => r.next() - 0.5)) {
        const at = byteAt(e.at);
        spliced = spliced.with(at, byteAt(e.at + e.removed) - at, e.insert);
      }
      expect(spliced.byteLength).toBe(Buffer.byteLength(want.join("")));
      expect(textOf(spliced.toBytes())).toBe(want.join(""));
      expect(textOf(sendable(spliced) as Uint8Array)).toBe(want.join(""));
    }
  });

  test("the model renamed in a body already given include_usage: both edits, in one piece", () => {
    const raw = '{"model":"acme","stream":true,"messages":[{"role":"user","content":"model acme"}]}';
    const withUsage = splicedBytes(bytesOf(raw), 1, 0, '"stream_options":{"include_usage":true},');
    const out = withUpstreamModel(withUsage, "acme", "acme-2026");
    expect(out).toBeInstanceOf(SplicedBody);
    expect(JSON.parse(textOf((out as SplicedBody).toBytes()))).toEqual({
      stream_options: { include_usage: true },
      ...JSON.parse(raw),
      model: "acme-2026",
    });
  });
});
