// For the codec tests: IR event sequences built part by part (a stream as an upstream decoder gives it), the
// answer such a sequence describes, SSE text split into events as the stream reader feeds them, and an SDK `fetch`
// served by a client codec with no server, so what the SDK parses is exactly what the codec writes.
import { createParser } from "eventsource-parser";
import type { ClientCodec, IrAnswer, IrEvent, IrRequest, IrUsage } from "../../src/llm/translate/ir";

/** The stream's start; `usage` left out when not given (some upstreams state none at the start). */
export function startEvent(id: string, model: string, usage?: IrUsage | null): IrEvent {
  return usage === undefined ? { type: "start", id, model } : { type: "start", id, model, usage };
}

/** A text part: its start, one delta per chunk, its end. */
export function textPart(index: number, ...chunks: string[]): IrEvent[] {
  return [
    { type: "part_start", index, part: { type: "text" } },
    ...chunks.map((text): IrEvent => ({ type: "delta", index, text })),
    { type: "part_end", index },
  ];
}

/** A reasoning part whose origin is `origin`: one delta per chunk, then its opaque value (signature) when given. */
export function reasoningPart(index: number, origin: string | null, chunks: string[], opaque?: string): IrEvent[] {
  const deltas = chunks.map((reasoning): IrEvent => ({ type: "delta", index, reasoning }));
  if (opaque !== undefined) deltas.push({ type: "delta", index, opaque });
  return [{ type: "part_start", index, part: { type: "reasoning", origin } }, ...deltas, { type: "part_end", index }];
}

/** A tool call: one arguments delta per chunk (none: a call streamed without arguments). */
export function toolCallPart(index: number, id: string, name: string, ...argumentChunks: string[]): IrEvent[] {
  return [
    { type: "part_start", index, part: { type: "tool_call", id, name } },
    ...argumentChunks.map((args): IrEvent => ({ type: "delta", index, arguments: args })),
    { type: "part_end", index },
  ];
}

/** The answer the events describe, as an upstream decoder's decodeAnswer would give it. */
export function answerOf(events: IrEvent[]): IrAnswer {
  const answer: IrAnswer = { id: "", model: "", parts: [], stop: "end_turn", usage: null };
  const parts = new Map<number, IrAnswer["parts"][number]>();
  for (const e of events) {
    if (e.type === "start") Object.assign(answer, { id: e.id, model: e.model });
    else if (e.type === "part_start")
      parts.set(e.index, e.part.type === "tool_call" ? { ...e.part, arguments: "" } : { ...e.part, text: "" });
    else if (e.type === "delta") {
      const part = parts.get(e.index)!;
      if (part.type === "tool_call") part.arguments += e.arguments ?? "";
      else if (part.type === "text" || part.type === "reasoning") part.text += e.text ?? e.reasoning ?? "";
      if (e.opaque && part.type === "reasoning") part.opaque = (part.opaque ?? "") + e.opaque;
    } else if (e.type === "finish") Object.assign(answer, { stop: e.stop, usage: e.usage });
  }
  answer.parts = [...parts.values()];
  return answer;
}

/** The SSE text a client codec writes for `events`, answering `request`. */
export function streamText(codec: ClientCodec, request: Record<string, any>, events: IrEvent[]): string {
  const encoder = codec.streamEncoder(request);
  return events.map((e) => encoder.write(e)).join("");
}

/** SSE text split into (event, data) pairs, as the gateway's stream reader feeds an upstream codec. */
export function sseEvents(text: string): Array<{ event: string | undefined; data: string }> {
  const out: Array<{ event: string | undefined; data: string }> = [];
  const parser = createParser({ onEvent: (e) => out.push({ event: e.event, data: e.data }) });
  parser.feed(text);
  return out;
}

/** What the SDKs accept as their `fetch` option. */
export type SdkFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A request the codec decoded, and the SSE text it answered with (streamed requests). */
export interface CodecCall {
  body: Record<string, any>;
  ir: IrRequest;
  sse?: string;
}

/**
 * A fetch for an SDK client whose "gateway" is `codec`: each request is decoded (kept in `calls`) and answered with
 * `reply` — an answer as the JSON encodeAnswer writes, or events as the SSE stream a streaming request gets (a
 * request that does not stream gets the answer the events describe).
 */
export function codecFetch(
  codec: ClientCodec,
  reply: { answer: IrAnswer } | { events: IrEvent[] },
): { fetch: SdkFetch; calls: CodecCall[] } {
  const calls: CodecCall[] = [];
  const fetch: SdkFetch = async (_input, init) => {
    const body = JSON.parse(String(init?.body));
    const call: CodecCall = { body, ir: codec.decodeRequest(body) };
    calls.push(call);
    if ("answer" in reply || !body.stream)
      return Response.json(codec.encodeAnswer("answer" in reply ? reply.answer : answerOf(reply.events), body));
    call.sse = streamText(codec, body, reply.events);
    return new Response(call.sse, { headers: { "content-type": "text/event-stream" } });
  };
  return { fetch, calls };
}

/** A one-message IR request for a model "m-1", with the fields of `over`. */
export function irRequest(over: Partial<IrRequest> = {}): IrRequest {
  return {
    model: "m-1",
    system: [],
    messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
    tools: [],
    stream: false,
    ...over,
  };
}
