// Limits on a request body, answered in the caller's protocol (an ApiError; each surface shapes it):
// - Time (408): REQUEST_BODY_TIMEOUT_SECONDS, plus a second per 64 KiB received, so a slow but steady upload gets
//   through while a client dribbling bytes cannot hold a handler (Bun's own idle timeout is minutes long, for LLM
//   answers). The allowance grows with what arrived, never with the length the client states.
// - Size (413 `request_too_large`): over MAX_REQUEST_BODY_MB, at once when content-length says so. Bun's own limit
//   (an empty 413 an SDK cannot read) is set far above ours, as a backstop (serverLimitOf).

import { ApiError } from "./errors";

/** Bytes per second a body must keep arriving at once its base deadline has passed. */
const MIN_BYTES_PER_SECOND = 64 * 1024;

/**
 * The largest stated length read natively, with request.bytes(): one call, no per-chunk work, and nothing to pay at
 * all for a body already in (the usual LLM request). Its progress cannot be seen, so it is given the allowance of
 * its whole stated length up front: at most 16 s above the base deadline, all that a false content-length can buy.
 * A longer body is read chunk by chunk (readCounted), its allowance growing with what has arrived; reading it costs
 * little beside what is then done with a megabyte of JSON.
 */
const NATIVE_READ_MAX_BYTES = 1024 * 1024;

export function bodyTimeout(seconds: number): ApiError {
  return new ApiError(
    408,
    "request_timeout",
    `The request body did not arrive within ${seconds} s. Send it whole, then wait for the answer.`,
    {
      type: "invalid_request_error",
    },
  );
}

/** REQUEST_BODY_TIMEOUT_SECONDS and MAX_REQUEST_BODY_MB, as config.ts reads them. */
export interface BodyLimits {
  seconds: number;
  maxBytes: number;
}

/** Bun's maxRequestBodySize: a backstop far above MAX_REQUEST_BODY_MB, so that our 413 is the one sent. */
export function serverLimitOf(limits: BodyLimits): number {
  return Math.max(4 * limits.maxBytes, 1024 ** 3);
}

export function bodyTooLarge(maxBytes: number): ApiError {
  return new ApiError(
    413,
    "request_too_large",
    `The request body is larger than the ${maxBytes / 1024 ** 2} MiB this endpoint accepts.`,
    {
      type: "invalid_request_error",
    },
  );
}

/**
 * `read` of the body, or a 408 when it has not all arrived within `seconds` of now. A body already in needs no timer;
 * nor does one that arrives within this turn of the event loop, as every LLM request's does (Bun hands the body over
 * just after the handler's first wait: 3,000 of 3,000 in before a `setImmediate` ran). So the timer is set only by a
 * `setImmediate` that finds the body still on its way, for what is left of the deadline: a timer made and cleared per
 * call, and the race around it, cost a sequential call ~3 µs more (docs/architecture.md, bench/pieces.ts).
 */
function withDeadline<T>(seconds: number, read: Promise<T>): Promise<T> {
  if (Bun.peek.status(read) !== "pending") return read;
  const deadline = performance.now() + seconds * 1000;
  return new Promise<T>((resolve, reject) => {
    let timer: Timer | undefined;
    setImmediate(() => {
      if (Bun.peek.status(read) !== "pending") return;
      timer = setTimeout(() => reject(bodyTimeout(seconds)), Math.max(0, deadline - performance.now()));
    });
    read.then(
      (body) => {
        clearTimeout(timer);
        resolve(body);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/**
 * The body's bytes, or a 413 when there are too many, or a 408 when they have not arrived in time. A body stated at
 * up to NATIVE_READ_MAX_BYTES is read by Bun in one call (request.bytes(), the fast path); a longer or chunked one is
 * counted as it arrives, refused once past the limit without reading the rest, and timed by what has arrived.
 */
export function bodyBytes(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const header = request.headers.get("content-length");
  const stated = header === null ? undefined : Number(header);
  if (stated !== undefined && stated > limits.maxBytes) return Promise.reject(bodyTooLarge(limits.maxBytes));
  if (stated !== undefined && stated <= NATIVE_READ_MAX_BYTES)
    return withDeadline(limits.seconds + Math.floor(stated / MIN_BYTES_PER_SECOND), request.bytes());
  if (!request.body) return withDeadline(limits.seconds, request.bytes());
  return readCounted(request.body, limits);
}

/**
 * A body read chunk by chunk: refused (413) once past maxBytes, and (408) once it has taken longer than the base
 * deadline plus a second per MIN_BYTES_PER_SECOND received. One timer, set for when the bytes in so far run out
 * and set again only when it fires, so a body arriving at a good pace costs no timer work per chunk.
 */
async function readCounted(body: ReadableStream<Uint8Array>, limits: BodyLimits): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  const started = performance.now();
  const allowedMs = () => (limits.seconds + total / MIN_BYTES_PER_SECOND) * 1000;
  let late: ApiError | undefined;
  let timer: Timer | undefined;
  const watch = () => {
    const left = allowedMs() - (performance.now() - started);
    if (left > 0) return void (timer = setTimeout(watch, left));
    late = bodyTimeout(Math.floor(allowedMs() / 1000));
    void reader.cancel(late).catch(() => {}); // ends the read in flight as done; `late` is what the caller gets
  };
  timer = setTimeout(watch, allowedMs());
  try {
    for (;;) {
      const { done, value } = await reader.read().catch((e) => Promise.reject(late ?? e));
      if (late) throw late;
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxBytes) {
        void reader.cancel().catch(() => {});
        throw bodyTooLarge(limits.maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}
