// Feeding SSE bytes to an upstream stream decoder the way the seam does: through eventsource-parser, in pieces cut
// anywhere (seeded), so a decoder is tested against real byte boundaries, not pre-split events.

import { createParser } from "eventsource-parser";
import type { IrEvent, UpstreamCodec } from "../../../src/llm/translate/ir";
import { randomPieces, rng } from "../../fakes/chunking";

export function decodeSse(decoder: ReturnType<UpstreamCodec["streamDecoder"]>, bytes: Uint8Array, seed = 1): IrEvent[] {
  const events: IrEvent[] = [];
  const text = new TextDecoder();
  const parser = createParser({ onEvent: (e) => events.push(...decoder.feed(e.event, e.data)) });
  for (const piece of randomPieces(bytes, rng(seed), 40)) parser.feed(text.decode(piece, { stream: true }));
  parser.feed(text.decode());
  events.push(...decoder.end());
  return events;
}

export const sse = (...chunks: Array<object | string>) =>
  new TextEncoder().encode(chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join(""));

/** A chat.completion.chunk with one choice (or none, for the usage chunk). */
export function chunk(delta: object | null, finish: string | null = null, usage: object | null = null): object {
  return {
    id: "chatcmpl-t1",
    object: "chat.completion.chunk",
    created: 1767225600,
    model: "m-1",
    choices: delta ? [{ index: 0, delta, logprobs: null, finish_reason: finish }] : [],
    usage,
  };
}

/** The parts an event sequence built, as a reader would assemble them (checks parts never interleave). */
export function assemble(events: IrEvent[]): Array<Record<string, any>> {
  const parts: Array<Record<string, any>> = [];
  let open: number | null = null;
  for (const e of events) {
    if (e.type === "part_start") {
      if (open !== null) throw new Error(`part ${e.index} started while part ${open} is open`);
      open = e.index;
      parts[e.index] = { ...e.part, text: "", arguments: "" };
    } else if (e.type === "delta") {
      if (e.index !== open) throw new Error(`delta for part ${e.index} while part ${open} is open`);
      const p = parts[e.index]!;
      p.text += e.text ?? e.reasoning ?? "";
      p.arguments += e.arguments ?? "";
    } else if (e.type === "part_end") {
      if (e.index !== open) throw new Error(`part_end for ${e.index} while ${open} is open`);
      open = null;
    }
  }
  return parts;
}
