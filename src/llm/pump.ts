// The byte pump between the upstream body and the client: every chunk is forwarded as it arrives (the same
// Uint8Array, untouched), and the tap watches on the side. Only the chat usage-chunk strip may replace bytes
// (the tap says so by returning them). The pump also tells the caller how it ended, exactly once:
//   end           the upstream finished its body
//   dropped       reading the upstream failed (connection reset, truncated chunked body)
//   client_abort  the client went away: the stream was cancelled; the upstream request is aborted at once

import type { StreamTap } from "./protocols/index.ts";

export type PumpEnd = "end" | "dropped" | "client_abort";

export interface PumpHooks {
  tap: StreamTap | null;
  /** keep references to the chunks (non-streaming bodies: usage is read from the whole body at the end) */
  collect: Uint8Array[] | null;
  onFirstByte(): void;
  onEnd(how: PumpEnd): void;
  /** abort the upstream request */
  abort(): void;
}

export function pump(body: ReadableStream<Uint8Array>, h: PumpHooks): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  let first = true;
  const end = (how: PumpEnd) => {
    if (ended) return;
    ended = true;
    h.onEnd(how);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        // Loop until something was enqueued: in strip mode a chunk may yield no bytes yet (an event held whole).
        for (;;) {
          let r: { done: boolean; value?: Uint8Array };
          try {
            r = await reader.read();
          } catch (e) {
            if (ended) return; // cancelled meanwhile; cancel() accounted for it
            const tail = h.tap?.flush();
            if (tail?.length) c.enqueue(tail);
            end("dropped");
            // Error the client's stream too: a truncated answer must not look complete.
            c.error(undefined); // undefined: Bun resets the connection without logging the reason
            return;
          }
          if (r.done) {
            const tail = h.tap?.flush();
            if (tail?.length) c.enqueue(tail);
            c.close();
            end("end");
            return;
          }
          const chunk = r.value!;
          if (first) {
            first = false;
            h.onFirstByte();
          }
          if (h.collect) h.collect.push(chunk);
          const out = h.tap ? h.tap.feed(chunk) : null;
          if (out === null) {
            c.enqueue(chunk);
            return;
          }
          if (out.length) {
            c.enqueue(out);
            return;
          }
        }
      },
      cancel() {
        h.abort();
        reader.cancel().catch(() => {});
        end("client_abort");
      },
    },
    { highWaterMark: 0 },
  );
}
