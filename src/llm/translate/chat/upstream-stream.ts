// A chat upstream's SSE (chat.completion.chunk events) → IR events, each as its chunk arrives. Parts never
// interleave (a new kind or another tool call closes the open one), the terminal `finish` waits for the usage
// chunk when usage was asked for, and a stream that ends before any finish_reason gives no terminal event (the
// seam reports it as ended early). The details: docs/translation.md, "Chat: a chat-native model's stream".

import { originOf, type IrEvent, type IrUsage, type StopReason, type TranslateTarget } from "../ir";
import { stopReasonOf, usageFromChat } from "./shared";
import { dialectOf, newCallId, reasoningOf, thoughtSignatureOf } from "./upstream";

type OpenPart =
  | { kind: "text" | "reasoning"; index: number }
  | { kind: "tool"; index: number; chatIndex: number; id: string };

const STATUS_BY_TYPE: Record<string, number> = {
  rate_limit_error: 429,
  tokens: 429,
  invalid_request_error: 400,
  server_error: 500,
  overloaded_error: 529,
};

export function streamDecoder(target: TranslateTarget): {
  feed(event: string | undefined, data: string): IrEvent[];
  end(): IrEvent[];
} {
  return new ChatStreamReader(target);
}

/** One stream's state: the part open, the calls already closed, and the stop and usage its finish will carry. */
class ChatStreamReader {
  private readonly dialect: ReturnType<typeof dialectOf>;
  private started = false;
  private ended = false;
  private open: OpenPart | null = null;
  private nextIndex = 0;
  /** chat indexes of calls already closed */
  private readonly closed = new Set<number>();
  private calledTools = false;
  /** a refusal delta came: the answer is a refusal whatever finish_reason says ("stop"), as decodeAnswer reads it */
  private refused = false;
  private stop: StopReason | null = null;
  private usage: IrUsage | null = null;

  constructor(private readonly target: TranslateTarget) {
    this.dialect = dialectOf(target);
  }

  feed(_event: string | undefined, data: string): IrEvent[] {
    if (this.ended) return [];
    const out: IrEvent[] = [];
    if (data === "[DONE]") {
      if (this.stop !== null) this.finish(out);
      else this.ended = true;
      return out;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      this.ended = true;
      return [
        {
          type: "error",
          status: 502,
          code: "upstream_bad_response",
          message: "The upstream sent a stream event that is not JSON.",
        },
      ];
    }
    this.onChunk(chunk, out);
    return out;
  }

  end(): IrEvent[] {
    if (this.ended) return [];
    this.ended = true;
    const out: IrEvent[] = [];
    if (this.stop !== null) this.finish(out);
    return out;
  }

  private close(out: IrEvent[]): void {
    const open = this.open;
    if (!open) return;
    out.push({ type: "part_end", index: open.index });
    if (open.kind === "tool") this.closed.add(open.chatIndex);
    this.open = null;
  }

  /** The IR index of the open text or reasoning part, opening one (and closing another kind) as needed. */
  private openText(kind: "text" | "reasoning", out: IrEvent[]): number {
    if (this.open?.kind === kind) return this.open.index;
    this.close(out);
    const index = this.nextIndex++;
    this.open = { kind, index };
    out.push({
      type: "part_start",
      index,
      part: kind === "text" ? { type: "text" } : { type: "reasoning", origin: originOf(this.target) },
    });
    return index;
  }

  private finish(out: IrEvent[]): void {
    this.ended = true;
    out.push({ type: "finish", stop: this.stop ?? "end_turn", usage: this.usage });
  }

  private onChunk(chunk: any, out: IrEvent[]): void {
    if (typeof chunk?.error === "object" && chunk.error !== null) return this.onError(chunk.error, out);
    const usage = usageFromChat(chunk?.usage);
    if (usage) this.usage = usage;
    const choice = Array.isArray(chunk?.choices) ? chunk.choices.find((c: any) => (c?.index ?? 0) === 0) : undefined;
    // Started by the first chunk about the answer: some upstreams lead with a chunk of no choices (Azure's
    // prompt_filter_results, with an empty id).
    if (!this.started && (choice || usage)) {
      this.started = true;
      out.push({
        type: "start",
        id: typeof chunk?.id === "string" && chunk.id ? chunk.id : newCallId(),
        model: typeof chunk?.model === "string" ? chunk.model : "",
        usage: null,
      });
    }
    if (!choice) {
      if (this.stop !== null && usage) this.finish(out); // the usage chunk after finish_reason
      return;
    }
    this.onDelta(choice.delta ?? {}, out);
    if (choice.finish_reason) {
      this.close(out);
      this.stop = this.refused ? "refusal" : stopReasonOf(choice.finish_reason, this.calledTools);
      if (usage) this.finish(out);
    }
  }

  private onError(error: any, out: IrEvent[]): void {
    this.ended = true;
    out.push({
      type: "error",
      status: typeof error.code === "number" ? error.code : (STATUS_BY_TYPE[error.type] ?? 500),
      code:
        typeof error.code === "string" ? error.code : typeof error.type === "string" ? error.type : "upstream_error",
      message: typeof error.message === "string" ? error.message : "The upstream failed.",
    });
  }

  private onDelta(delta: any, out: IrEvent[]): void {
    const reasoning = reasoningOf(delta, this.dialect);
    if (reasoning) out.push({ type: "delta", index: this.openText("reasoning", out), reasoning });
    if (typeof delta.content === "string" && delta.content)
      out.push({ type: "delta", index: this.openText("text", out), text: delta.content });
    if (typeof delta.refusal === "string" && delta.refusal) {
      this.refused = true;
      out.push({ type: "delta", index: this.openText("text", out), text: delta.refusal });
    }
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.onToolCall(call, out);
  }

  private onToolCall(call: any, out: IrEvent[]): void {
    const chatIndex = typeof call?.index === "number" ? call.index : 0;
    const id = typeof call?.id === "string" && call.id ? call.id : undefined;
    const open = this.open;
    const same = open?.kind === "tool" && open.chatIndex === chatIndex && (id === undefined || id === open.id);
    let index = open?.index;
    if (!same) {
      if (id === undefined && this.closed.has(chatIndex)) return;
      index = this.startToolCall(call, chatIndex, id ?? newCallId(), out);
    }
    const args = call?.function?.arguments;
    if (typeof args === "string" && args) out.push({ type: "delta", index: index!, arguments: args });
  }

  /** Opens the IR part of a call (after the part of its thought signature, if it has one); returns its index. */
  private startToolCall(call: any, chatIndex: number, id: string, out: IrEvent[]): number {
    this.close(out);
    const signature = thoughtSignatureOf(call);
    if (signature) {
      // Gemini's signature for this call: a reasoning part of its own just before it (chat/upstream.ts).
      const index = this.nextIndex++;
      out.push(
        { type: "part_start", index, part: { type: "reasoning", origin: originOf(this.target) } },
        { type: "delta", index, opaque: signature },
        { type: "part_end", index },
      );
    }
    const index = this.nextIndex++;
    this.open = { kind: "tool", index, chatIndex, id };
    this.calledTools = true;
    out.push({
      type: "part_start",
      index,
      part: { type: "tool_call", id, name: String(call?.function?.name ?? "") },
    });
    return index;
  }
}
