// readArrived takes what a stream already holds, never waits for more, and hands the read in flight to the pump,
// which goes on from it without losing or repeating a byte.
import { expect, test } from "bun:test";
import { endsBetweenEvents, pump, TAIL_BYTES, type PumpEnd } from "../../src/llm/pump";
import { readArrived } from "../../src/llm/answer-head";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (chunks: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(chunks));

/** A body the test feeds by hand: `push` a chunk, `close` or `fail` it. */
function handFed() {
  let c!: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start: (ctrl) => void (c = ctrl),
    cancel: () => void (cancelled = true),
  });
  return {
    body,
    push: (s: string) => c.enqueue(bytes(s)),
    close: () => c.close(),
    fail: (e: unknown) => c.error(e),
    cancelled: () => cancelled,
  };
}

async function drain(gen: AsyncGenerator<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const chunk of gen) out.push(chunk);
  return out;
}

test("a stream whose end is already in is read whole: every chunk in order, ended, nothing in flight", async () => {
  const up = handFed();
  up.push("data: a\n\n");
  up.push("data: b\n\n");
  up.close();
  const head = await readArrived(up.body);
  expect(head.ended).toBe(true);
  expect(text(head.chunks)).toBe("data: a\n\ndata: b\n\n");
  expect(head.firstByteAt).not.toBeNull();
  expect(head.pending).toBeUndefined();
});

test("a stream that closed with its last chunk is not read again only to be told it ended", async () => {
  const up = handFed();
  let reads = 0;
  const getReader = up.body.getReader.bind(up.body);
  up.body.getReader = (() => {
    const reader = getReader();
    const read = reader.read.bind(reader);
    reader.read = () => (reads++, read());
    return reader;
  }) as typeof up.body.getReader;
  up.push("data: a\n\n");
  up.push("data: b\n\n");
  up.close();
  const head = await readArrived(up.body);
  expect([head.ended, text(head.chunks), reads]).toEqual([true, "data: a\n\ndata: b\n\n", 2]);
});

test("a stream still open: what is in is taken, the read in flight goes to the pump, which forwards the rest as it comes", async () => {
  const up = handFed();
  up.push("data: a\n\n");
  const head = await readArrived(up.body);
  expect(head.ended).toBe(false);
  expect(text(head.chunks)).toBe("data: a\n\n");
  expect(head.pending).toBeDefined();

  let ended = null as PumpEnd | null; // set by onEnd, which flow analysis does not see
  const gen = pump(head, new AbortController().signal, {
    tap: null,
    collect: null,
    onFirstByte() {},
    onEnd: (how) => void (ended = how),
  });
  expect(text([(await gen.next()).value!])).toBe("data: a\n\n");
  const next = gen.next(); // waits on the read readArrived left in flight
  await Bun.sleep(5);
  up.push("data: b\n\n");
  expect(text([(await next).value!])).toBe("data: b\n\n");
  up.push("data: c\n\n");
  up.close();
  expect(text(await drain(gen))).toBe("data: c\n\n");
  expect(ended).toBe("end");
});

test("nothing in yet: no chunk, no first byte, and readArrived returns without waiting", async () => {
  const up = handFed();
  const head = await readArrived(up.body);
  expect(head.chunks).toEqual([]);
  expect(head.firstByteAt).toBeNull();
  expect(head.ended).toBe(false);
  up.close(); // the pump then sees the end straight away
  expect(
    await drain(pump(head, new AbortController().signal, { tap: null, collect: null, onFirstByte() {}, onEnd() {} })),
  ).toEqual([]);
});

test("a body already broken throws, as reading it does (the proxy answers 502, nothing sent yet)", async () => {
  const up = handFed();
  up.push("data: a\n\n");
  up.fail(new Error("reset"));
  await expect(readArrived(up.body)).rejects.toThrow("reset");
});

// The pump throws `undefined` to cut the client's connection: Bun prints a thrown Error to stderr (pump.ts ending).
test("a body that breaks while the pump waits on the read in flight: the pump ends as dropped and throws (to cut the connection)", async () => {
  const up = handFed();
  const head = await readArrived(up.body);
  let ended = null as PumpEnd | null; // set by onEnd, which flow analysis does not see
  const gen = pump(head, new AbortController().signal, {
    tap: null,
    collect: null,
    onFirstByte() {},
    onEnd: (how) => void (ended = how),
  });
  const next = gen.next();
  up.fail(new Error("reset"));
  expect(
    await next.then(
      () => "went on",
      (e) => ["threw", e],
    ),
  ).toEqual(["threw", undefined]);
  expect(ended).toBe("dropped");
});

test("a stream that drops between events ends with the protocol's closing event, cleanly; mid-event it is cut", async () => {
  for (const [pieces, noticed] of [
    [["data: a\n\n", "data: b\n\n"], true],
    [["data: a\n", "\n"], true], // the blank line that ends the event came as a chunk of its own
    [["data: a\r\n\r\n"], true],
    [["data: a\n\n", 'data: {"par'], false],
    [["data: a\n"], false],
  ] as const) {
    const up = handFed();
    up.push(pieces[0]);
    const head = await readArrived(up.body);
    let ended = null as PumpEnd | null; // set by onEnd, which flow analysis does not see
    let seen: string | null = null;
    const gen = pump(head, new AbortController().signal, {
      tap: null,
      collect: null,
      onFirstByte() {},
      onEnd: (how) => void (ended = how),
      dropNotice: (last) => ((seen = text([last!])), bytes("event: error\n\n")),
    });
    const out: Uint8Array[] = [];
    const done = (async () => {
      for await (const chunk of gen) out.push(chunk);
    })();
    for (const p of pieces.slice(1)) up.push(p);
    await Bun.sleep(1);
    up.fail(new Error("reset"));
    if (noticed) {
      await done;
      expect(text(out)).toBe(pieces.join("") + "event: error\n\n");
      expect(seen!).toBe(pieces.join("").slice(-seen!.length)); // the last bytes sent, across the last two chunks
    } else {
      expect(
        await done.then(
          () => "ended cleanly",
          (e) => ["threw", e],
        ),
      ).toEqual(["threw", undefined]);
      expect(seen).toBeNull();
    }
    expect(ended).toBe("dropped");
  }
});

test("endsBetweenEvents: a blank line (LF, CRLF or CR) ends an event; nothing sent is between events too", () => {
  for (const s of ["x\n\n", "x\r\n\r\n", "x\r\r", "\n\n"]) expect(endsBetweenEvents(bytes(s))).toBe(true);
  for (const s of ["x\n", "x", "x\r\n", "\n", "x\n\r\n"]) expect(endsBetweenEvents(bytes(s))).toBe(false);
  expect(endsBetweenEvents(null)).toBe(true);
});

test("a client gone before the body is first read (Bun then never starts it): settled once as client_abort, upstream cancelled", async () => {
  for (const abortFirst of [true, false]) {
    const up = handFed();
    up.push("data: a\n\n");
    const head = await readArrived(up.body);
    const ac = new AbortController();
    if (abortFirst) ac.abort();
    const ends: PumpEnd[] = [];
    const gen = pump(head, ac.signal, {
      tap: null,
      collect: null,
      onFirstByte() {},
      onEnd: (how) => void ends.push(how),
    });
    if (!abortFirst) ac.abort();
    expect(ends).toEqual(["client_abort"]);
    await Bun.sleep(0);
    expect(up.cancelled()).toBe(true); // the upstream body is let go at once
    await gen.return(undefined); // what Bun may do with a body it never started: no second settle
    expect(ends).toEqual(["client_abort"]);
  }
});

test("a pump that ran to its end settles once; a later abort of the client's signal changes nothing", async () => {
  const up = handFed();
  up.push("data: a\n\n");
  up.close();
  const ac = new AbortController();
  const ends: PumpEnd[] = [];
  const gen = pump({ ...(await readArrived(up.body)), ended: false }, ac.signal, {
    tap: null,
    collect: null,
    onFirstByte() {},
    onEnd: (how) => void ends.push(how),
  });
  expect(text(await drain(gen))).toBe("data: a\n\n");
  ac.abort();
  expect(ends).toEqual(["end"]);
});

test("a large body's chunks are kept only as a tail of at least TAIL_BYTES (its usage is at the end), not whole", async () => {
  const up = handFed();
  const head = await readArrived(up.body);
  const kept: Uint8Array[] = [];
  const gen = pump(head, new AbortController().signal, { tap: null, collect: kept, onFirstByte() {}, onEnd() {} });
  const piece = new Uint8Array(16 * 1024).fill(0x20);
  for (let i = 0; i < 64; i++) up.push(new TextDecoder().decode(piece)); // 1 MiB of padding
  up.push('{"usage":{"prompt_tokens":7}}');
  up.close();
  const all = await drain(gen);
  expect(all.reduce((n, c) => n + c.byteLength, 0)).toBe(64 * 16 * 1024 + 29); // the client got everything
  const keptBytes = kept.reduce((n, c) => n + c.byteLength, 0);
  expect(keptBytes).toBeGreaterThanOrEqual(TAIL_BYTES);
  expect(keptBytes).toBeLessThan(TAIL_BYTES + 16 * 1024 + 29);
  expect(text(kept).endsWith('{"usage":{"prompt_tokens":7}}')).toBe(true);
});
