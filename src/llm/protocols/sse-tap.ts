// The framing every stream tap shares: bytes → text (a UTF-8 character may be split across chunks, hence the
// streaming decoder) → eventsource-parser → the protocol's onEvent. The protocol's handler only sees whole events
// and fills in the TapState; the bytes themselves are never changed here (see sse-strip.ts for the one case
// where they are).

import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { StreamTap, TapError, TapResult } from "./types";
import { estimateTokensFromChars, type TokenUsage } from "../usage";

export interface TapState {
  usage: TokenUsage | null;
  failed: boolean;
  error?: TapError;
  completed: boolean;
  outputChars: number;
  /** web searches the stream showed as they ran (for a stream cut before its final usage) */
  webSearches: number;
  /** the usage's output count is a placeholder the stream should restate (Anthropic's message_start says 1 and its
   *  message_delta the total): never restated, the estimate from the content seen counts when it is larger */
  outputProvisional?: boolean;
}

export type EventHandler = (event: EventSourceMessage, state: TapState) => void;

/** A tap that only watches; `transform` (optional) may replace bytes, as the chat strip does. */
export function createSseTap(
  onEvent: EventHandler,
  transform?: { feed(chunk: Uint8Array): Uint8Array | null; flush(): Uint8Array | null },
): StreamTap {
  const state: TapState = { usage: null, failed: false, completed: false, outputChars: 0, webSearches: 0 };
  const decoder = new TextDecoder();
  const parser = createParser({ onEvent: (ev) => handle(ev) });
  let ended = false;

  // A malformed event must never break the client's stream: the tap is a bystander, so a handler error only
  // loses metering detail for that event.
  function handle(ev: EventSourceMessage) {
    try {
      onEvent(ev, state);
    } catch {
      /* unparseable usage/error event: leave state as it was */
    }
  }

  return {
    feed(chunk) {
      if (!ended) parser.feed(decoder.decode(chunk, { stream: true }));
      return transform ? transform.feed(chunk) : null;
    },
    flush() {
      return transform ? transform.flush() : null;
    },
    sawEnd: () => state.completed || state.failed,
    end(): TapResult {
      if (!ended) {
        ended = true;
        const rest = decoder.decode();
        if (rest) parser.feed(rest);
      }
      let usage = state.usage;
      if (usage && state.outputProvisional)
        usage = { ...usage, output: Math.max(usage.output, estimateTokensFromChars(state.outputChars)) };
      const r: TapResult = {
        usage,
        failed: state.failed,
        completed: state.completed && !state.failed,
        outputCharsSoFar: state.outputChars,
      };
      if (state.webSearches) r.webSearchesSoFar = state.webSearches;
      if (state.error) r.error = state.error;
      return r;
    },
  };
}

/** Pulls {type, code, message} out of the usual error objects (strings only; anything else is dropped). */
export function toTapError(e: unknown): TapError {
  const out: TapError = {};
  if (typeof e !== "object" || e === null) return out;
  const o = e as Record<string, unknown>;
  if (typeof o.type === "string") out.type = o.type;
  if (typeof o.code === "string") out.code = o.code;
  if (typeof o.message === "string") out.message = o.message;
  return out;
}
