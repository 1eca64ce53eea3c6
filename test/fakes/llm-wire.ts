// How the fake LLM upstream (llm-upstream.ts) puts an answer on the wire as its scenario asks: whole, gzipped, or
// streamed in irregular pieces with gaps, delayed headers or first byte, a stall that never ends, or a cut
// connection; and when each request counts as finished or aborted.

import { eventPieces, randomPieces } from "./chunking";
import type { Answer, ScenarioSpec } from "./llm-answers";
import type { RecordedRequest } from "./llm-upstream";

/** The fake's randomness and abort counting, and whether it runs with no delays (the benchmark's). */
export interface Wire {
  fast: boolean;
  next: () => number;
  markAborted: (rec: RecordedRequest) => void;
  /** resolves at the test's next `cut()` (drops with `cutWhenTold`) */
  told: () => Promise<void>;
}

/** Sends `answer` as `spec` asks. */
export async function send(rec: RecordedRequest, answer: Answer, spec: ScenarioSpec, wire: Wire): Promise<Response> {
  const { fast } = wire;
  if (spec.headersDelayMs && !fast) await sleepUnlessAborted(rec, spec.headersDelayMs);
  if (rec.aborted) return new Response(null, { status: 499 });
  const whole = spec.whole === true && spec.kind !== "drop";
  const stalls = spec.stallAfterBytes !== undefined || spec.stallAfterEvents !== undefined;
  const streamed =
    stalls || (!whole && (answer.contentType === "text/event-stream" || spec.kind === "drop" || spec.chunked === true));
  if (stalls && spec.contentLength) answer.headers["content-length"] = String(answer.body.length);
  if (!streamed) {
    if (spec.firstByteMs && !fast) await Bun.sleep(spec.firstByteMs);
    if (spec.gzip)
      return done(
        rec,
        json(answer.status, Bun.gzipSync(new Uint8Array(answer.body)), {
          ...answer.headers,
          "content-encoding": "gzip",
        }),
      );
    if (whole)
      return done(
        rec,
        new Response(answer.body, {
          status: answer.status,
          headers: { "content-type": answer.contentType, "cache-control": "no-cache", ...answer.headers },
        }),
      );
    return done(rec, json(answer.status, answer.body, { "content-type": answer.contentType, ...answer.headers }));
  }
  return new Response(writeStream(rec, answer.body, spec, wire), {
    status: answer.status,
    headers: { "content-type": answer.contentType, "cache-control": "no-cache", ...answer.headers },
  });
}

export function done(rec: RecordedRequest, res: Response): Response {
  rec.finishedAt = performance.now();
  return res;
}

export function json(status: number, body: Uint8Array | string, headers: Record<string, string>): Response {
  return new Response(body, { status, headers: { "content-type": "application/json", ...headers } });
}

/**
 * The body as a stream: irregular pieces at arbitrary offsets with small random gaps (or fixed delays when
 * slow; one piece per event and no waiting when fast). `drop` cuts the connection after some bytes:
 * controller.error(undefined) makes Bun reset the socket without a terminating chunk (and without logging).
 */
function writeStream(rec: RecordedRequest, bytes: Uint8Array, spec: ScenarioSpec, wire: Wire) {
  const { fast, next, markAborted } = wire;
  // Asked for before the first byte: the test may see the last bytes, and cut, before the loop below has ended.
  const told = spec.cutWhenTold ? wire.told() : null;
  const cutAt =
    spec.kind === "drop"
      ? Math.min(
          spec.dropAfterEvents !== undefined
            ? afterEvents(bytes, spec.dropAfterEvents)
            : (spec.dropAfterBytes ?? Math.floor(bytes.length / 2)),
          bytes.length,
        )
      : -1;
  const stallAt =
    spec.stallAfterEvents !== undefined ? afterEvents(bytes, spec.stallAfterEvents) : (spec.stallAfterBytes ?? -1);
  const body = cutAt >= 0 ? bytes.subarray(0, cutAt) : stallAt >= 0 ? bytes.subarray(0, stallAt) : bytes;
  const pieces = fast || spec.eventPieces ? eventPieces(body) : randomPieces(body, next, spec.pieceBytes ?? 160);
  return new ReadableStream<Uint8Array>({
    async start(c) {
      try {
        if (!fast && spec.firstByteMs) await Bun.sleep(spec.firstByteMs);
        for (const p of pieces) {
          if (rec.aborted) return;
          c.enqueue(p);
          if (fast) continue;
          const gap = spec.chunkDelayMs ?? (next() < 0.5 ? 0 : 1 + Math.floor(next() * 3));
          if (gap > 0) await Bun.sleep(gap);
        }
        if (rec.aborted) return;
        if (stallAt >= 0) return void (await sleepUnlessAborted(rec, 30_000)); // then left open: hung
        if (cutAt >= 0) {
          // Let the bytes already written reach the client before the cut, as they would on a real network; the
          // wait is only a guess on a busy machine, where a test that needs those bytes tells the cut itself.
          await (told ? Promise.race([told, sleepUnlessAborted(rec, 10_000)]) : Bun.sleep(20));
          if (rec.aborted) return;
          rec.finishedAt = performance.now(); // from here on a closing client is not an abort
          c.error(undefined);
          return;
        }
        rec.finishedAt = performance.now();
        c.close();
      } catch {
        // the client went away while we were writing: nothing more to do
      }
    },
    cancel() {
      markAborted(rec);
    },
  });
}

/** Waits `ms`, or less if the client goes away meanwhile (a hung upstream must not outlive its test). */
async function sleepUnlessAborted(rec: RecordedRequest, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (!rec.aborted && performance.now() < until) await Bun.sleep(Math.min(10, ms));
}

/** The offset just after the `n`th event's closing blank line (the recorded streams use LF). */
export function afterEvents(bytes: Uint8Array, n: number): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  for (let seen = 0; seen < n; seen++) {
    const blank = text.indexOf("\n\n", at);
    if (blank === -1) return bytes.length;
    at = blank + 2;
  }
  return at;
}
