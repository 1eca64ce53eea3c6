// A Responses SSE stream (GPT, Codex, Grok) → IrEvents, each upstream event turned into IR events at once.
// Items arrive one after another (output_index), so an IR part opens on an item's first content (a text or
// reasoning part with nothing in it is never opened: an empty thinking block upsets Anthropic clients) and closes
// on its done event; whatever belongs to no open part (hosted tool items, a stray delta) is skipped.
// A reasoning item is one IR part: its summary parts are joined with a blank line, and its encrypted_content (on
// output_item.done only) becomes the part's opaque value.

import { originOf, type IrEvent, type IrEventOf, type TranslateTarget } from "../ir";
import { reasoningText, stopOf, usageIn } from "./upstream";

type OpenPart = { kind: "text" | "reasoning" | "tool_call"; index: number; outputIndex: number; streamed: boolean };

/** In-stream error codes → the HTTP status the same failure would have had before the stream began. */
const STATUS_OF_CODE: Record<string, number> = {
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  invalid_prompt: 400,
  invalid_request_error: 400,
  context_length_exceeded: 400,
  server_error: 500,
  server_is_overloaded: 503,
  slow_down: 503,
};

export function streamDecoder(target: TranslateTarget): {
  feed(event: string | undefined, data: string): IrEvent[];
  end(): IrEvent[];
} {
  return new ResponsesStreamReader(target);
}

/** One stream's state: the part now open, and what the finish event's stop reason needs to know. */
class ResponsesStreamReader {
  ended = false;
  sawToolCall = false;
  sawRefusal = false;
  private started = false;
  private nextIndex = 0;
  private open: OpenPart | null = null;
  /** a reasoning item added but not yet opened: it opens at its first content */
  private reasoningItem: { outputIndex: number; id?: string } | null = null;

  constructor(readonly target: TranslateTarget) {}

  feed(event: string | undefined, data: string): IrEvent[] {
    if (this.ended) return [];
    const out: IrEvent[] = [];
    let j: any;
    try {
      j = JSON.parse(data);
    } catch {
      this.fail(out, {
        code: "upstream_protocol_error",
        message: "The upstream sent an event that could not be read.",
      });
      return out;
    }
    const type = event ?? (typeof j?.type === "string" ? j.type : undefined);
    if (type && typeof j === "object" && j !== null && Object.hasOwn(EVENT_HANDLERS, type))
      EVENT_HANDLERS[type]!(this, out, j);
    return out;
  }

  end(): IrEvent[] {
    return []; // no terminal event: the stream ended early, and the seam says so in the client's protocol
  }

  begin(out: IrEvent[], response: any): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: "start", id: String(response?.id ?? ""), model: String(response?.model ?? ""), usage: null });
  }

  startPart(out: IrEvent[], outputIndex: number, part: IrEventOf<"part_start">["part"]): OpenPart {
    this.begin(out, null); // a server that skipped response.created still gives the client a start
    this.close(out);
    const opened: OpenPart = { kind: part.type, index: this.nextIndex++, outputIndex, streamed: false };
    out.push({ type: "part_start", index: opened.index, part });
    this.open = opened;
    return opened;
  }

  close(out: IrEvent[]): void {
    if (!this.open) return;
    out.push({ type: "part_end", index: this.open.index });
    this.open = null;
  }

  isOpen(kind: OpenPart["kind"], outputIndex: unknown): OpenPart | null {
    const open = this.open;
    return open && open.kind === kind && open.outputIndex === outputIndex ? open : null;
  }

  onItemAdded(out: IrEvent[], j: any): void {
    const item = j.item;
    if (item?.type === "reasoning") {
      this.close(out);
      this.reasoningItem = { outputIndex: j.output_index, ...(typeof item.id === "string" && { id: item.id }) };
    } else if (item?.type === "function_call") {
      this.sawToolCall = true;
      const call = this.startPart(out, j.output_index, {
        type: "tool_call",
        id: String(item.call_id ?? item.id ?? ""),
        name: String(item.name ?? ""),
      });
      if (typeof item.arguments === "string" && item.arguments) {
        call.streamed = true;
        out.push({ type: "delta", index: call.index, arguments: item.arguments });
      }
    }
    // a message opens its IR text part at its first content part; other items (hosted tools) have none
  }

  onItemDone(out: IrEvent[], j: any): void {
    const item = j.item;
    if (item?.type === "reasoning") {
      const text = reasoningText(item);
      const opaque = typeof item.encrypted_content === "string" && item.encrypted_content ? item.encrypted_content : "";
      const part =
        this.isOpen("reasoning", j.output_index) ?? (text || opaque ? this.openReasoning(out, j.output_index) : null);
      if (!part) return;
      if (!part.streamed && text) out.push({ type: "delta", index: part.index, reasoning: text });
      if (opaque) out.push({ type: "delta", index: part.index, opaque });
      this.close(out);
    } else if (item?.type === "function_call") {
      const call = this.isOpen("tool_call", j.output_index);
      if (!call) return;
      if (!call.streamed && typeof item.arguments === "string" && item.arguments)
        out.push({ type: "delta", index: call.index, arguments: item.arguments });
      this.close(out);
    } else if (this.open?.outputIndex === j.output_index) this.close(out);
  }

  /** The reasoning part of the item added at outputIndex, opened now that it has content. */
  openReasoning(out: IrEvent[], outputIndex: unknown): OpenPart | null {
    const added = this.reasoningItem;
    if (!added || added.outputIndex !== outputIndex) return null;
    this.reasoningItem = null;
    return this.startPart(out, outputIndex as number, {
      type: "reasoning",
      origin: originOf(this.target),
      ...(added.id !== undefined && { id: added.id }),
    });
  }

  text(out: IrEvent[], j: any, delta: unknown): void {
    if (typeof delta !== "string" || !delta) return;
    const part = this.isOpen("text", j.output_index) ?? this.startPart(out, j.output_index, { type: "text" });
    part.streamed = true;
    out.push({ type: "delta", index: part.index, text: delta });
  }

  reasoning(out: IrEvent[], j: any, delta: unknown): void {
    if (typeof delta !== "string" || !delta) return;
    const part = this.isOpen("reasoning", j.output_index) ?? this.openReasoning(out, j.output_index);
    if (!part) return;
    part.streamed = true;
    out.push({ type: "delta", index: part.index, reasoning: delta });
  }

  finish(out: IrEvent[], response: any): void {
    this.begin(out, response);
    this.close(out);
    this.ended = true;
    out.push({
      type: "finish",
      stop: stopOf(response?.status, response?.incomplete_details, this.sawToolCall, this.sawRefusal),
      usage: usageIn(response?.usage, this.target.dialect),
    });
  }

  fail(out: IrEvent[], error: any): void {
    this.close(out);
    this.ended = true;
    const code =
      typeof error?.code === "string" && error.code
        ? error.code
        : typeof error?.type === "string" && error.type
          ? error.type
          : "server_error";
    out.push({
      type: "error",
      status: STATUS_OF_CODE[code] ?? 500,
      code,
      message: typeof error?.message === "string" ? error.message : "The upstream failed.",
    });
  }
}

type EventHandler = (reader: ResponsesStreamReader, out: IrEvent[], j: any) => void;

const begin: EventHandler = (reader, out, j) => reader.begin(out, j.response);
const finish: EventHandler = (reader, out, j) => reader.finish(out, j.response);
const reasoningDelta: EventHandler = (reader, out, j) => reader.reasoning(out, j, j.delta);

/** Each upstream event type → its IR events; types not listed (hosted tools' progress, annotations) are skipped. */
const EVENT_HANDLERS: Record<string, EventHandler> = {
  "response.created": begin,
  "response.queued": begin,
  "response.in_progress": begin,
  "response.output_item.added": (reader, out, j) => reader.onItemAdded(out, j),
  "response.output_item.done": (reader, out, j) => reader.onItemDone(out, j),
  "response.content_part.added": (reader, _out, j) => {
    if (j.part?.type === "refusal") reader.sawRefusal = true;
  },
  "response.content_part.done": (reader, out, j) => {
    // a part whose text came only here (no deltas) is still delivered
    const whole =
      j.part?.type === "output_text" ? j.part.text : j.part?.type === "refusal" ? j.part.refusal : undefined;
    if (!reader.isOpen("text", j.output_index)) reader.text(out, j, whole);
    if (reader.isOpen("text", j.output_index)) reader.close(out);
  },
  "response.output_text.delta": (reader, out, j) => reader.text(out, j, j.delta),
  "response.refusal.delta": (reader, out, j) => {
    reader.sawRefusal = true;
    reader.text(out, j, j.delta);
  },
  "response.reasoning_summary_part.added": (reader, out, j) => {
    // the blank line between summary parts, as reasoningText joins them
    const part = reader.isOpen("reasoning", j.output_index);
    if (part?.streamed && j.summary_index > 0) out.push({ type: "delta", index: part.index, reasoning: "\n\n" });
  },
  "response.reasoning_summary_text.delta": reasoningDelta,
  "response.reasoning_text.delta": reasoningDelta,
  "response.function_call_arguments.delta": (reader, out, j) => {
    const call = reader.isOpen("tool_call", j.output_index);
    if (!call || typeof j.delta !== "string" || !j.delta) return;
    call.streamed = true;
    out.push({ type: "delta", index: call.index, arguments: j.delta });
  },
  "response.completed": finish,
  "response.incomplete": finish,
  "response.failed": (reader, out, j) => reader.fail(out, j.response?.error),
  error: (reader, out, j) => reader.fail(out, typeof j.error === "object" && j.error !== null ? j.error : j),
};
