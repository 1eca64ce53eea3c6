// A translated stream, event by event: the upstream's SSE bytes → eventsource-parser → the upstream protocol's
// stream decoder (IR events) → the client protocol's stream encoder → bytes for the client. Each upstream chunk is
// translated as it arrives; nothing waits for the end.
//
// It also decides what the client is told when things go wrong, always in the client protocol's in-stream error
// event: an upstream event the decoder cannot read (the stream stops there), a stream that ended without its
// terminal event, a dropped connection, the gateway's shutdown. `failure` says when the translation itself told the
// client the call failed, so the seam never charges such a call as a success (translated.ts).

import { createParser } from "eventsource-parser";
import type { IrEvent } from "./translate/ir";
import { restoreEventToolName } from "./translate/tool-names";
import type { Translation } from "./translated";
import type { PumpEnd } from "./pump";
import { TIMED_OUT_MESSAGE } from "./timeouts";

type Notice = Extract<IrEvent, { type: "error" }>;

const BROKE: Notice = {
  type: "error",
  status: 502,
  code: "upstream_bad_response",
  message: "The upstream's connection broke before its answer was complete; nothing was charged. Retry the request.",
};

/** What the client is told when the stream ends without its terminal event, by how the pump ended. */
const ENDED_EARLY: Notice = {
  ...BROKE,
  message: "The upstream ended its stream before the answer was complete; nothing was charged. Retry the request.",
};
const END_NOTICES: Partial<Record<PumpEnd, Notice>> = {
  end: ENDED_EARLY,
  ended_early: ENDED_EARLY,
  dropped: BROKE,
  timeout: { type: "error", status: 504, code: "upstream_timeout", message: TIMED_OUT_MESSAGE },
  shutdown: {
    type: "error",
    status: 503,
    code: "gateway_shutting_down",
    message:
      "The gateway is restarting and ended this stream before its answer was complete; what you received is charged. Retry the request.",
  },
};

const UNREADABLE: Notice = {
  type: "error",
  status: 502,
  code: "upstream_protocol_error",
  message:
    "The upstream sent a stream event the gateway could not translate; the answer is incomplete. Retry the request.",
};

export interface StreamTranslator {
  /** the client's bytes for one upstream chunk (null: nothing to send yet) */
  feed(chunk: Uint8Array): Uint8Array | null;
  /** the client's last bytes once the upstream body ended as `how` says (its error event if none ended it) */
  end(how: PumpEnd): Uint8Array | null;
  /** an error event or a terminal one has been written: nothing more goes to the client */
  readonly over: boolean;
  /** why the translation told the client the call failed (null: it did not) */
  readonly failure: string | null;
}

export function createStreamTranslator(
  t: Translation,
  warn: (msg: string, fields: Record<string, unknown>) => void,
): StreamTranslator {
  const decoder = t.upstream.streamDecoder(t.target);
  const encoder = t.client.streamEncoder(t.request);
  const utf8 = new TextDecoder();
  const bytes = new TextEncoder();
  let out = "";
  let over = false;
  let failure: string | null = null;

  const write = (events: IrEvent[]) => {
    for (const e of events) {
      if (over) return;
      if (e.type === "finish" || e.type === "error") over = true;
      // An error the upstream's decoder reports (an unreadable event, an upstream error event: the tap tells the
      // two apart for metering).
      if (e.type === "error") failure = `${e.code}: ${e.message}`;
      out += encoder.write(restoreEventToolName(t.toolNames, e));
    }
  };
  const guarded = (step: () => void) => {
    try {
      step();
    } catch (e) {
      // A codec that throws on what the upstream sent: the client is told, and the stream stops here.
      warn("translated stream event not readable", { error: String((e as Error)?.message ?? e) });
      if (!over) write([UNREADABLE]);
    }
  };
  const parser = createParser({ onEvent: (m) => !over && write(decoder.feed(m.event, m.data)) });
  const take = (): Uint8Array | null => {
    if (out === "") return null;
    const b = bytes.encode(out);
    out = "";
    return b;
  };

  return {
    feed(chunk) {
      if (!over) guarded(() => parser.feed(utf8.decode(chunk, { stream: true })));
      return take();
    },
    end(how) {
      if (how === "client_abort" || over) return take();
      // An event cut by a drop or a shutdown is not read: only a clean end may complete the last one.
      const clean = how === "end" || how === "ended_early";
      guarded(() => {
        if (clean) parser.reset({ consume: true });
        write(decoder.end());
      });
      if (!over) {
        write([END_NOTICES[how] ?? BROKE]);
        // The native tap saw the upstream's end, yet no answer reached the client: a translation failure. Any other
        // way of ending is metered by the native rule for it (meter.ts streamVerdict).
        failure = how === "end" ? "the upstream's stream ended without an answer the client could be given" : null;
      }
      return take();
    },
    get over() {
      return over;
    },
    get failure() {
      return failure;
    },
  };
}
