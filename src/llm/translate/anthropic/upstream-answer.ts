// Claude's answers read into the IR: the Messages JSON answer and the Messages SSE stream, event by event.
// Thinking blocks become reasoning parts whose origin is the model that wrote them (originOf) and whose opaque value is
// the signature (or a redacted block's data). Blocks only Anthropic's servers produce (server_tool_use, search
// results, ...) have no IR form and are skipped, and the IR's part indexes count only the parts kept.

import { originOf, type IrAnswer, type IrEvent, type StopReason, type TranslateTarget } from "../ir";
import { fromAnthropicToolId, statusOfErrorType, stopFromAnthropic, usageFromAnthropic } from "./shared";

type AnswerPart = IrAnswer["parts"][number];

export function decodeAnswer(json: any, target: TranslateTarget): IrAnswer {
  if (!json || typeof json !== "object" || !Array.isArray(json.content))
    throw new Error("the upstream answer is not a Messages answer");
  const parts: AnswerPart[] = [];
  for (const b of json.content) {
    if (b?.type === "text" && typeof b.text === "string") parts.push({ type: "text", text: b.text });
    else if (b?.type === "thinking")
      parts.push({
        type: "reasoning",
        text: String(b.thinking ?? ""),
        origin: originOf(target),
        ...(b.signature && { opaque: String(b.signature) }),
      });
    else if (b?.type === "redacted_thinking")
      parts.push({
        type: "reasoning",
        text: "",
        origin: originOf(target),
        redacted: true,
        opaque: String(b.data ?? ""),
      });
    else if (b?.type === "tool_use")
      parts.push({
        type: "tool_call",
        id: fromAnthropicToolId(String(b.id)),
        name: String(b.name),
        arguments: JSON.stringify(b.input ?? {}),
      });
  }
  return {
    id: String(json.id ?? ""),
    model: String(json.model ?? ""),
    parts,
    stop: stopFromAnthropic(json.stop_reason),
    stopSequence: typeof json.stop_sequence === "string" ? json.stop_sequence : null,
    usage: usageFromAnthropic(json.usage),
  };
}

// Anthropic's own usage fields, as the stream states them: message_delta totals replace message_start's; absent
// or null fields keep the earlier value (never added).
const FIELDS = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"] as const;

function mergeUsage(prev: Record<string, any> | null, raw: any): Record<string, any> | null {
  if (!raw || typeof raw !== "object") return prev;
  const merged: Record<string, any> = { ...prev };
  for (const k of FIELDS) if (typeof raw[k] === "number") merged[k] = raw[k];
  if (typeof raw.output_tokens_details?.thinking_tokens === "number")
    merged.output_tokens_details = raw.output_tokens_details;
  return merged;
}

export function streamDecoder(target: TranslateTarget): {
  feed(event: string | undefined, data: string): IrEvent[];
  end(): IrEvent[];
} {
  return new MessagesStreamReader(target);
}

type BlockStart = (block: any, index: number, target: TranslateTarget) => IrEvent[];

/** The IR events a content block starts with, by block type; other types (server tool blocks) are skipped. */
const BLOCK_STARTS: Record<string, BlockStart> = {
  text: (block, index) => [
    { type: "part_start", index, part: { type: "text" } },
    ...(block.text ? [{ type: "delta", index, text: String(block.text) } as const] : []),
  ],
  thinking: (block, index, target) => [
    { type: "part_start", index, part: { type: "reasoning", origin: originOf(target) } },
    ...(block.thinking ? [{ type: "delta", index, reasoning: String(block.thinking) } as const] : []),
    ...(block.signature ? [{ type: "delta", index, opaque: String(block.signature) } as const] : []),
  ],
  redacted_thinking: (block, index, target) => [
    {
      type: "part_start",
      index,
      part: { type: "reasoning", origin: originOf(target), redacted: true, opaque: String(block.data ?? "") },
    },
  ],
  tool_use: (block, index) => [
    {
      type: "part_start",
      index,
      part: { type: "tool_call", id: fromAnthropicToolId(String(block.id)), name: String(block.name) },
    },
    ...(block.input && typeof block.input === "object" && Object.keys(block.input).length
      ? [{ type: "delta", index, arguments: JSON.stringify(block.input) } as const]
      : []),
  ],
};

/** One stream's state: which Anthropic blocks were kept (under which IR index), and what message_delta said. */
class MessagesStreamReader {
  private nextIndex = 0;
  /** Anthropic's block index → the IR index, for the blocks kept; skipped blocks are absent. */
  private readonly kept = new Map<number, number>();
  private usage: Record<string, any> | null = null;
  private stop: StopReason = "end_turn";
  private stopSequence: string | null = null;
  private done = false;
  private started = false;

  constructor(private readonly target: TranslateTarget) {}

  feed(event: string | undefined, data: string): IrEvent[] {
    if (this.done) return [];
    let ev: any;
    try {
      ev = JSON.parse(data);
    } catch {
      this.done = true;
      return [
        {
          type: "error",
          status: 502,
          code: "upstream_protocol_error",
          message: "the upstream sent an event that could not be read",
        },
      ];
    }
    const type = event ?? ev?.type;
    // The IR starts with `start`: a server that skipped message_start still gives the client one (the chat
    // encoder writes its chunks' id and model from it).
    if (!this.started && type !== "message_start" && type !== "error" && type !== "ping") {
      this.started = true;
      return [{ type: "start", id: "", model: "", usage: null }, ...this.feed(event, data)];
    }
    return this.read(type, ev);
  }

  // A stream that closes before message_stop ended early: no terminal event, the seam reports it.
  end(): IrEvent[] {
    return [];
  }

  private read(type: unknown, ev: any): IrEvent[] {
    switch (type) {
      case "message_start":
        return this.messageStart(ev.message ?? {});
      case "content_block_start":
        return this.blockStart(ev);
      case "content_block_delta":
        return this.blockDelta(ev);
      case "content_block_stop": {
        const index = this.kept.get(ev.index);
        return index === undefined ? [] : [{ type: "part_end", index }];
      }
      case "message_delta":
        if (ev.delta?.stop_reason) this.stop = stopFromAnthropic(ev.delta.stop_reason);
        if (typeof ev.delta?.stop_sequence === "string") this.stopSequence = ev.delta.stop_sequence;
        this.usage = mergeUsage(this.usage, ev.usage);
        return [];
      case "message_stop":
        this.done = true;
        return [
          { type: "finish", stop: this.stop, stopSequence: this.stopSequence, usage: usageFromAnthropic(this.usage) },
        ];
      case "error":
        return this.error(ev.error);
      default:
        return []; // ping, and event types added later
    }
  }

  private messageStart(message: any): IrEvent[] {
    // A late message_start (after a start given for it) is not a second answer: its counts sit under later ones.
    if (this.started) {
      this.usage = mergeUsage(mergeUsage(null, message.usage), this.usage);
      return [];
    }
    this.started = true;
    this.usage = mergeUsage(null, message.usage);
    return [
      {
        type: "start",
        id: String(message.id ?? ""),
        model: String(message.model ?? ""),
        usage: usageFromAnthropic(this.usage),
      },
    ];
  }

  private blockStart(ev: any): IrEvent[] {
    const blockType = ev.content_block?.type;
    if (typeof blockType !== "string" || !Object.hasOwn(BLOCK_STARTS, blockType)) return [];
    const index = this.nextIndex++;
    this.kept.set(ev.index, index);
    return BLOCK_STARTS[blockType]!(ev.content_block, index, this.target);
  }

  private blockDelta(ev: any): IrEvent[] {
    const index = this.kept.get(ev.index);
    const delta = ev.delta;
    if (index === undefined || !delta) return [];
    if (delta.type === "text_delta" && delta.text) return [{ type: "delta", index, text: String(delta.text) }];
    if (delta.type === "thinking_delta" && delta.thinking)
      return [{ type: "delta", index, reasoning: String(delta.thinking) }];
    if (delta.type === "signature_delta" && delta.signature)
      return [{ type: "delta", index, opaque: String(delta.signature) }];
    if (delta.type === "input_json_delta" && delta.partial_json)
      return [{ type: "delta", index, arguments: String(delta.partial_json) }];
    return [];
  }

  private error(error: any): IrEvent[] {
    this.done = true;
    const type = typeof error?.type === "string" ? error.type : "api_error";
    return [
      {
        type: "error",
        status: statusOfErrorType(type),
        code: type,
        message: String(error?.message ?? "upstream error"),
      },
    ];
  }
}
