// The byte pump between the upstream body and the client: every chunk is forwarded as it arrives, untouched, and
// the tap watches on the side (only the chat usage-chunk strip may replace bytes). It is an async generator used
// directly as the Response body, which Bun drives with less machinery than a pull-based ReadableStream. The upstream
// fetch shares the client request's AbortSignal, so a client's disconnect aborts it at once, even mid-wait.

import type { StreamTap } from "./protocols/index";
import { joined } from "./bytes";
import { SilenceTimer } from "./timeouts";
import type { ByteReader, Head } from "./answer-head";

// How the pump ended, told to the caller once: `end` (the upstream finished its body), `client_abort` (the signal
// fired, or Bun stopped the generator at a yield), or a StreamCut: `ended_early` (a clean end before the protocol's
// own end event), `dropped` (reading failed), `timeout` (silent for `silenceMs`, timeouts.ts), `shutdown` (still
// open when the grace period ended, cutStreams). A cut stream gets the protocol's error event, never a bare close.
export type PumpEnd = "end" | StreamCut | "client_abort";

/** How a stream can end before its answer is whole, each with the protocol's error event (dropNotice). */
export type StreamCut = "dropped" | "ended_early" | "timeout" | "shutdown";

export interface PumpHooks {
  tap: StreamTap | null;
  /**
   * Keep the last chunks, at least TAIL_BYTES of them (non-streaming bodies: usage is read at the end, and every
   * protocol puts it last). Only a tail: a large answer (embeddings of many inputs) is not held whole in memory.
   */
  collect: Uint8Array[] | null;
  /**
   * A body (not a stream): whether what was collected, once the upstream has finished, ends a whole answer. When it
   * does not, the client's connection is cut instead of ended cleanly: its 200 is already sent, and a body that ends
   * cleanly would pass for a whole one.
   */
  wholeBody?: () => boolean;
  /** sees every chunk of a body as it passes (the head's chunks are the caller's to show it) */
  watch?: (chunk: Uint8Array) => void;
  onFirstByte(): void;
  onEnd(how: PumpEnd): void;
  /** the longest silence between two upstream chunks, ms (LLM_SILENCE_TIMEOUT_SECONDS); absent: no limit */
  silenceMs?: number;
  /**
   * Streams: the closing event to send when the upstream drops or the gateway shuts down (the protocol's in-stream
   * error), given the last bytes the client got. Sent only when those end between two events; mid-event, no event
   * can follow that the client could read, so its connection is cut as the upstream's was.
   */
  dropNotice?: (lastSent: Uint8Array | null, why: StreamCut) => Uint8Array;
}

/** How much of a larger answer's end is kept for its usage object (a few hundred bytes in practice). */
export const TAIL_BYTES = 64 * 1024;

/** What the client gets for an upstream chunk: the chunk itself, the tap's replacement (the chat strip), or nothing. */
function clientBytes(tap: StreamTap | null, chunk: Uint8Array): Uint8Array | null {
  const replaced = tap ? tap.feed(chunk) : null;
  if (replaced === null) return chunk;
  return replaced.length ? replaced : null;
}

/** The bytes the client gets for chunks already read (readArrived), through the tap; if the stream ended, its tail. */
export function throughTap(tap: StreamTap, chunks: Uint8Array[], ended: boolean): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const chunk of chunks) {
    const bytes = clientBytes(tap, chunk);
    if (bytes) out.push(bytes);
  }
  const tail = ended ? tap.flush() : null;
  if (tail?.length) out.push(tail);
  return out;
}

/** Whether SSE bytes sent so far end between two events (a blank line ends an event), or nothing was sent. */
export function endsBetweenEvents(last: Uint8Array | null): boolean {
  if (last === null || last.length === 0) return true;
  const n = last.length;
  if (last[n - 1] === 0x0a)
    return (
      n >= 2 &&
      (last[n - 2] === 0x0a || (last[n - 2] === 0x0d && n >= 4 && last[n - 3] === 0x0a && last[n - 4] === 0x0d))
    );
  return last[n - 1] === 0x0d && n >= 2 && last[n - 2] === 0x0d;
}

/** Appends `chunk`, then drops chunks from the front while the rest still holds TAIL_BYTES. */
export function keepTail(chunks: Uint8Array[], chunk: Uint8Array): void {
  chunks.push(chunk);
  let size = 0;
  for (const c of chunks) size += c.byteLength;
  while (chunks.length > 1 && size - chunks[0]!.byteLength >= TAIL_BYTES) size -= chunks.shift()!.byteLength;
}

/**
 * Forwards the head's chunks (already read and accounted for: through the tap for a stream, collected for a body),
 * then the rest of the upstream's body through the tap. `onEnd` is called exactly once, also for a client that
 * left before the body was first read: Bun never starts a body generator for a client already gone (checked: its
 * `finally` never runs), which would leave the call unsettled and its credits held; the client's signal covers
 * that case (one listener per pumped answer; answers in one piece never get here).
 */
export function pump(head: Head, clientSignal: AbortSignal, hooks: PumpHooks): AsyncGenerator<Uint8Array> {
  let started = false;
  let ended = false;
  const onEnd = (how: PumpEnd) => {
    if (ended) return;
    ended = true;
    clientSignal.removeEventListener("abort", leftBeforeStart);
    hooks.onEnd(how);
  };
  const leftBeforeStart = () => {
    if (started) return; // the running pump sees the abort itself
    head.reader!.cancel().catch(() => {});
    onEnd("client_abort");
  };
  const body = steps(head, clientSignal, { ...hooks, onEnd }, () => void (started = true));
  if (clientSignal.aborted) leftBeforeStart();
  else clientSignal.addEventListener("abort", leftBeforeStart, { once: true });
  return body;
}

/** The pumps running now, each by the function that ends it at shutdown. */
const running = new Set<() => void>();

/**
 * At the end of the shutdown grace period (ops/shutdown.ts onGraceOver), before the server closes what is still
 * open: every pump stops reading its upstream and ends its stream with the protocol's error event. Resolves once
 * they have ended, or after `ms`.
 */
export async function cutStreams(ms = 500): Promise<void> {
  for (const cut of running) cut();
  const until = Date.now() + ms;
  while (running.size && Date.now() < until) await Bun.sleep(10);
}

type Read = { done: boolean; value?: Uint8Array };

/** One pump's state: its upstream reader, the timers that may cut it, the last bytes the client got. */
class PumpRun {
  how: PumpEnd | null = null;
  private cut = false;
  private readonly reader: ByteReader;
  private readonly silence: SilenceTimer | null;
  private first: boolean;
  private pending: Promise<Read> | null;
  // The last two chunks the client got: a drop's closing event depends on how they end (an event's closing blank
  // line may come as a chunk of its own; one split over three chunks counts as mid-event: the connection is cut,
  // which is safe).
  private prev: Uint8Array | null = null;
  private last: Uint8Array | null = null;

  constructor(
    head: Head,
    private readonly hooks: PumpHooks,
  ) {
    this.reader = head.reader!;
    // Silence cancels the read in flight as shutdown does; next() then sees `silence.fired`.
    this.silence = hooks.silenceMs
      ? new SilenceTimer(hooks.silenceMs, () => void this.reader.cancel().catch(() => {}))
      : null;
    this.first = head.firstByteAt === null;
    this.pending = head.pending ?? null;
  }

  /** Shutdown: the read in flight ends (done), and next() sees `cut`. */
  readonly stop = () => {
    this.cut = true;
    this.reader.cancel().catch(() => {});
  };

  /** Notes bytes as sent to the client, and returns them. */
  sent(bytes: Uint8Array): Uint8Array {
    this.prev = this.last;
    return (this.last = bytes);
  }

  /** The next upstream chunk, null at the body's end, or how the pump ends instead. */
  async next(clientSignal: AbortSignal): Promise<Uint8Array | null | StreamCut | "client_abort"> {
    let read: Read;
    try {
      read = await (this.pending ?? this.reader.read());
      this.pending = null;
    } catch {
      if (!this.cut && clientSignal.aborted) return "client_abort";
      return this.cut ? "shutdown" : this.silence?.fired ? "timeout" : "dropped";
    }
    if (this.cut) return "shutdown";
    if (this.silence?.fired) return "timeout";
    return read.done ? null : read.value!;
  }

  /** What the client gets for an upstream chunk, after the hooks have seen it. */
  take(chunk: Uint8Array): Uint8Array | null {
    this.silence?.heard();
    if (this.first) {
      this.first = false;
      this.hooks.onFirstByte();
    }
    if (this.hooks.collect) keepTail(this.hooks.collect, chunk);
    this.hooks.watch?.(chunk);
    return clientBytes(this.hooks.tap, chunk);
  }

  /** The upstream finished its body: the tap's held bytes, then a clean end, or an ending when it is not whole. */
  *bodyEnded(): Generator<Uint8Array> {
    const tail = this.hooks.tap?.flush();
    if (tail?.length) yield this.sent(tail);
    // A clean close before the stream's own end must not pass for a whole answer (an SDK would return it).
    if (this.hooks.tap && !this.hooks.tap.sawEnd()) return yield* this.ending("ended_early");
    this.how = "end";
    if (this.hooks.wholeBody && !this.hooks.wholeBody()) throw undefined; // `undefined`: see ending
  }

  /**
   * How a stream ends that its upstream dropped, ended early or let go silent, or that shutdown cut (meter.ts says
   * what each is charged). After the stream's own end (or error) was seen: the client has the whole answer, which is
   * metered as such (streamVerdict), so it ends cleanly. Before it, between events: the protocol's error event (an
   * SDK raises it as an API error); mid-event: the connection is cut, as the upstream's was. A translated stream has
   * no dropNotice: the cut reaches its translator (translated-stream.ts), which writes the client's error event
   * itself. A truncated answer must never look complete.
   */
  *ending(why: StreamCut): Generator<Uint8Array> {
    this.how = why;
    if (this.hooks.tap?.sawEnd()) return;
    const sent = this.prev && this.last ? joined([this.prev, this.last]) : this.last;
    if (this.hooks.dropNotice && endsBetweenEvents(sent)) yield this.hooks.dropNotice(sent, why);
    // Thrown into the response body, anything cuts the connection, but an Error is also printed by Bun to stderr as
    // a raw multi-line dump; `undefined` is not. The call's end is logged as a JSON line (call.ts endCall).
    else throw undefined;
  }

  /** The pump has stopped, however: timers stopped, the upstream cancelled if the client left, the caller told. */
  close(): void {
    this.silence?.stop();
    // Stopped at a yield without an ending of its own: the client went away.
    if (this.how === null) this.how = "client_abort";
    if (this.how === "client_abort") this.reader.cancel().catch(() => {});
    this.hooks.onEnd(this.how);
  }
}

async function* steps(
  head: Head,
  clientSignal: AbortSignal,
  hooks: PumpHooks,
  start: () => void,
): AsyncGenerator<Uint8Array> {
  start();
  const run = new PumpRun(head, hooks);
  running.add(run.stop);
  try {
    for (const chunk of head.chunks) yield run.sent(chunk);
    for (;;) {
      const next = await run.next(clientSignal);
      if (next === "client_abort") return void (run.how = "client_abort");
      if (typeof next === "string") return yield* run.ending(next);
      if (next === null) return yield* run.bodyEnded();
      const out = run.take(next);
      if (out) yield run.sent(out);
    }
  } finally {
    running.delete(run.stop);
    run.close();
  }
}
