// The first read of an upstream's answer, before anything is sent to the client: a stream or a small JSON answer
// that is already whole is answered in one piece (one write, no chunked framing); anything else goes on through the
// pump (pump.ts), so a slow stream's bytes still go out as they arrive and memory stays bounded.

import { SilenceTimer, UpstreamTimeout } from "./timeouts";
import { abortUpstream } from "./upstream";

/** What the pump needs of the upstream body's reader. */
export interface ByteReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
}

// A JSON body is of no use to a client before its last byte, so holding one of this size until it is whole delays
// nothing; a larger one (embeddings of many inputs) goes through the pump.
/** Non-streaming answers up to this size are read whole and answered in one piece (see the header). */
export const WHOLE_ANSWER_BYTES = 64 * 1024;

export interface Head {
  /** the upstream body's reader, to pump the rest from (null: the body was read whole) */
  reader: ByteReader | null;
  chunks: Uint8Array[];
  /** the upstream finished its body within the limit */
  ended: boolean;
  firstByteAt: number | null;
  /** a read already asked of `reader` and still waiting (readArrived): the pump's first read */
  pending?: Promise<{ done: boolean; value?: Uint8Array }>;
}

/** A streamed answer: nothing read yet. */
export function headOf(body: ReadableStream<Uint8Array>): Head {
  return { reader: body.getReader() as ByteReader, chunks: [], ended: false, firstByteAt: null };
}

/**
 * Reads a stream's chunks while they are already in: stops at the body's end (`ended`) or at the first read that
 * would wait for the network, which is kept as `pending` for the pump. Adds no wait of its own: a read of a chunk
 * the runtime already holds settles within one microtask. A stream that closed with the chunk just read (its
 * reader's `closed` has settled) has ended: no read is asked only to be told so (~1 µs of a sequential call).
 * Throws as reading the body does (dropped, aborted).
 */
export async function readArrived(body: ReadableStream<Uint8Array>): Promise<Head> {
  const head: Head = headOf(body);
  const reader = head.reader as ReadableStreamDefaultReader<Uint8Array>;
  for (;;) {
    const read = reader.read();
    await null;
    if (Bun.peek.status(read) === "pending") {
      read.catch(() => {}); // a client gone before the pump starts must not leave an unhandled rejection
      head.pending = read;
      return head;
    }
    const chunk = await read;
    if (chunk.done) return { ...head, ended: true };
    head.firstByteAt ??= performance.now();
    head.chunks.push(chunk.value!);
    if (Bun.peek.status(reader.closed) === "fulfilled") return { ...head, ended: true };
  }
}

/**
 * Reads a non-streaming answer until it ends or passes `limit` bytes. A body whose plain length the upstream
 * stated is read natively in one call (cheaper than chunk by chunk: docs/architecture.md), and when it came in with
 * its headers (the usual JSON answer: that read has settled already) it is taken at once, with no promise to await
 * (callers check); a compressed or chunked one chunk by chunk, so a large one stops at the limit. Throws as reading
 * the body does (dropped, aborted).
 */
export function readHead(res: Response, limit: number, silenceMs = 0): Head | Promise<Head> {
  const length = res.headers.get("content-length");
  if (length === null || !(Number(length) <= limit) || res.headers.has("content-encoding"))
    return readChunks(res, limit, silenceMs);
  const read = res.bytes();
  if (Bun.peek.status(read) === "fulfilled") return wholeHead(Bun.peek(read) as Uint8Array);
  return readWhole(res, read, silenceMs);
}

function wholeHead(bytes: Uint8Array): Head {
  return { reader: null, chunks: [bytes], ended: true, firstByteAt: performance.now() };
}

async function readWhole(res: Response, read: Promise<Uint8Array>, silenceMs: number): Promise<Head> {
  return wholeHead(await watchedRead(res, silenceMs, (arrived) => arrived(read)));
}

async function readChunks(res: Response, limit: number, silenceMs: number): Promise<Head> {
  return watchedRead(res, silenceMs, async (arrived) => {
    const head = headOf(res.body!);
    let size = 0;
    while (size <= limit) {
      const chunk = await arrived(head.reader!.read());
      if (chunk.done) return { ...head, ended: true };
      head.firstByteAt ??= performance.now();
      head.chunks.push(chunk.value!);
      size += chunk.value!.byteLength;
    }
    return head;
  });
}

/**
 * `reading`, given the wait for each of its reads: the silence timer starts only when a read has to wait for the
 * network. An upstream silent for `silenceMs` has its request aborted, which fails the read under way.
 */
async function watchedRead<T>(
  res: Response,
  silenceMs: number,
  reading: (arrived: <R>(read: Promise<R>) => Promise<R>) => Promise<T>,
): Promise<T> {
  let silence = null as SilenceTimer | null; // set inside `arrived`, which TypeScript does not follow
  const arrived = async <R>(read: Promise<R>): Promise<R> => {
    if (silenceMs > 0 && silence === null) {
      await null;
      if (Bun.peek.status(read) === "pending")
        silence = new SilenceTimer(silenceMs, () =>
          abortUpstream(res, new UpstreamTimeout("LLM_SILENCE_TIMEOUT_SECONDS")),
        );
    }
    const result = await read;
    silence?.heard();
    return result;
  };
  try {
    return await reading(arrived);
  } catch (e) {
    throw silence?.fired ? new UpstreamTimeout("LLM_SILENCE_TIMEOUT_SECONDS") : e;
  } finally {
    silence?.stop();
  }
}
