// A translated stream, event by event: upstream SSE bytes → eventsource-parser → the upstream protocol's decoder (IR
// events) → the client protocol's encoder → bytes for the client, each chunk as it arrives. It also decides what the
// client is told when things go wrong (an unreadable event, a missing terminal event, a drop, shutdown), always in
// the client protocol's in-stream error event; `failure` records that, so such a call is never charged as a success.

import { createParser, type EventSourceParser } from "eventsource-parser";
import type { IrEvent } from "./translate/ir";
import { restoreEventToolName } from "./translate/tool-names";
import type { Translation } from "./translated";
import { failedTranslation, translatedHeaders } from "./translated-answer";
import { callVerdict, endCall, type Call } from "./call";
import { streamVerdict, type Verdict } from "./meter";
import { pump, type PumpEnd } from "./pump";
import { headOf } from "./answer-head";
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

/** Translates one stream: upstream chunks in, the client's bytes out, the client protocol's error if it ends badly. */
export class StreamTranslator {
  private readonly decoder: ReturnType<Translation["upstream"]["streamDecoder"]>;
  private readonly encoder: ReturnType<Translation["client"]["streamEncoder"]>;
  private readonly parser: EventSourceParser;
  private readonly utf8 = new TextDecoder();
  private readonly bytes = new TextEncoder();
  private out = "";
  private isOver = false;
  private failureReason: string | null = null;

  constructor(
    private readonly t: Translation,
    private readonly warn: (msg: string, fields: Record<string, unknown>) => void,
    requestId: string,
  ) {
    this.decoder = t.upstream.streamDecoder(t.target);
    this.encoder = t.client.streamEncoder(t.request, requestId);
    this.parser = createParser({ onEvent: (m) => !this.isOver && this.write(this.decoder.feed(m.event, m.data)) });
  }

  /** an error event or a terminal one has been written: nothing more goes to the client */
  get over(): boolean {
    return this.isOver;
  }

  /** why the translation told the client the call failed (null: it did not) */
  get failure(): string | null {
    return this.failureReason;
  }

  /** the client's bytes for one upstream chunk (null: nothing to send yet) */
  feed(chunk: Uint8Array): Uint8Array | null {
    if (!this.isOver) this.guarded(() => this.parser.feed(this.utf8.decode(chunk, { stream: true })));
    return this.take();
  }

  /** the client's last bytes once the upstream body ended as `how` says (its error event if none ended it) */
  end(how: PumpEnd): Uint8Array | null {
    if (how === "client_abort" || this.isOver) return this.take();
    // An event cut by a drop or a shutdown is not read: only a clean end may complete the last one.
    const clean = how === "end" || how === "ended_early";
    this.guarded(() => {
      if (clean) this.parser.reset({ consume: true });
      this.write(this.decoder.end());
    });
    if (!this.isOver) {
      this.write([END_NOTICES[how] ?? BROKE]);
      // The native tap saw the upstream's end, yet no answer reached the client: a translation failure. Any other
      // way of ending is metered by the native rule for it (meter.ts streamVerdict).
      this.failureReason =
        how === "end" ? "the upstream's stream ended without an answer the client could be given" : null;
    }
    return this.take();
  }

  private write(events: IrEvent[]): void {
    for (const e of events) {
      if (this.isOver) return;
      if (e.type === "finish" || e.type === "error") this.isOver = true;
      // An error the upstream's decoder reports (an unreadable event, an upstream error event: the tap tells the
      // two apart for metering).
      if (e.type === "error") this.failureReason = `${e.code}: ${e.message}`;
      this.out += this.encoder.write(restoreEventToolName(this.t.toolNames, e));
    }
  }

  private guarded(step: () => void): void {
    try {
      step();
    } catch (e) {
      // A codec that throws on what the upstream sent: the client is told, and the stream stops here.
      this.warn("translated stream event not readable", { error: String((e as Error)?.message ?? e) });
      if (!this.isOver) this.write([UNREADABLE]);
    }
  }

  private take(): Uint8Array | null {
    if (this.out === "") return null;
    const encoded = this.bytes.encode(this.out);
    this.out = "";
    return encoded;
  }
}

export function translatedStream(call: Call, t: Translation, res: Response): Response {
  const status = res.status;
  const tap = t.native.createStreamTap({ stripUsageChunk: false });
  const translator = new StreamTranslator(
    t,
    (msg, fields) => call.deps.ctx.log.warn(msg, { ...fields, request_id: call.requestId, model: call.model.id }),
    call.requestId,
  );
  let firstByteAt: number | null = null;
  let tail: Uint8Array | null = null;
  // No dropNotice: the translator writes the client protocol's error event itself, whatever the upstream left cut.
  const upstreamBytes = pump(headOf(res.body!), call.request.signal, {
    tap,
    collect: null,
    silenceMs: call.deps.timeouts.silenceMs,
    onFirstByte: () => (firstByteAt = performance.now()),
    onEnd(how: PumpEnd) {
      tail = translator.end(how);
      const verdict = callVerdict(call, (): Verdict => {
        const tapped = tap.end();
        const metered = streamVerdict(tapped, how, call.model, call.plan);
        const { outcome } = metered;
        // Told it failed, never charged as a success: the usage stated so far, if any (issue 20, point 1).
        if (translator.failure && (outcome === "ok" || outcome === "estimated" || outcome === "client_abort"))
          return failedTranslation(call, tapped.usage, translator.failure);
        return metered;
      });
      endCall(call, verdict, status, firstByteAt);
    },
  });
  const headers = translatedHeaders(res, call, t);
  headers["content-type"] = "text/event-stream; charset=utf-8";
  headers["cache-control"] = "no-cache";
  return new Response(clientStream(upstreamBytes, translator, () => tail) as any, { status, headers });
}

/** The client's bytes: each upstream chunk translated as it arrives; after an error event, the upstream is let go. */
async function* clientStream(
  upstream: AsyncGenerator<Uint8Array>,
  translator: StreamTranslator,
  tail: () => Uint8Array | null,
): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of upstream) {
      const out = translator.feed(chunk);
      if (out) yield out;
      // Ending the loop ends the pump as a client abort would: the upstream stops generating what nobody reads.
      if (translator.over && translator.failure) break;
    }
  } catch {
    // The pump cut the stream (a drop, the shutdown): its onEnd has run and left the client's last bytes in `tail`.
  }
  const last = tail();
  if (last) yield last;
}
