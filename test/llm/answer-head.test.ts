// readHead takes a JSON answer that came in with its headers at once (no promise on the call's way back), and one
// still arriving, or of no stated length, by waiting for it: the same bytes either way.
import { expect, test } from "bun:test";
import { readHead } from "../../src/llm/answer-head";

const answer = '{"id":"x","usage":{"prompt_tokens":1,"completion_tokens":2}}';
const text = (chunks: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(chunks));

/** A body that arrives in two pieces, the second only when `rest` is called. */
function arriving(length: number | null) {
  let c!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (ctrl) => void (c = ctrl) });
  c.enqueue(new TextEncoder().encode(answer.slice(0, 10)));
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (length !== null) headers["content-length"] = String(length);
  return {
    res: new Response(body, { headers }),
    rest: () => {
      c.enqueue(new TextEncoder().encode(answer.slice(10)));
      c.close();
    },
  };
}

test("an answer already in, of a stated length within the limit, is read at once: a head, not a promise", () => {
  const res = new Response(answer, { headers: { "content-length": String(answer.length) } });
  const head = readHead(res, 64 * 1024, 1000);
  expect(head).not.toBeInstanceOf(Promise);
  expect(head).toMatchObject({ ended: true, reader: null });
  expect(text((head as Awaited<typeof head>).chunks)).toBe(answer);
});

test("an answer still arriving, or with no stated length, is waited for and read whole", async () => {
  for (const length of [answer.length, null]) {
    const up = arriving(length);
    const reading = readHead(up.res, 64 * 1024, 1000);
    expect(reading).toBeInstanceOf(Promise);
    up.rest();
    const head = await reading;
    expect([length, head.ended, text(head.chunks)]).toEqual([length, true, answer]);
  }
});

test("an answer over the limit is not read past it", async () => {
  const up = arriving(null);
  const head = await readHead(up.res, 5, 1000);
  expect(head.ended).toBe(false);
  expect(text(head.chunks)).toBe(answer.slice(0, 10));
  await head.reader!.cancel();
});
