// Answers written back to an Anthropic client: the Messages JSON answer and the Messages SSE stream.
//
// Reasoning from another provider becomes a thinking block whose `signature` is sealed with its origin, so that
// when Claude Code sends it back client-request.ts can route it to the provider that made it, and only there.
// Tool arguments that are not a JSON object become `input: {}`: Anthropic's input must be an object.

import { anthropicErrorType } from "../../protocols/anthropic";
import type { IrAnswer, IrEvent, IrEventOf, IrUsage } from "../ir";
import { JsonObjectPrefix } from "../json-prefix";
import { inputObject, signatureFor, usageToAnthropic } from "./shared";

const ZERO: IrUsage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

/** Anthropic message ids start with msg_; another provider's id is kept after the prefix. */
export function messageId(id: string): string {
  return id.startsWith("msg_") ? id : `msg_${id.replace(/[^A-Za-z0-9_-]/g, "")}`;
}

// An unsigned thinking block gets signature "" (the SDK types want a string); a streamed tool call's arguments go
// out as they arrive while they stay a JSON object's prefix, and what closes them into an object at the call's end
// ("{}" for none), so clients that parse the accumulated text (Claude Code) get an object, never an error.
/** Text with no text, or reasoning with neither text nor a value to send back: nothing the client could use. */
function isEmpty(p: IrAnswer["parts"][number]): boolean {
  if (p.type === "text") return p.text === "";
  return p.type === "reasoning" && p.text === "" && !signatureFor(p);
}

export function encodeAnswer(answer: IrAnswer): Record<string, unknown> {
  const content = answer.parts
    .filter((p) => !isEmpty(p))
    .map((p) => {
      switch (p.type) {
        case "text":
          return { type: "text", text: p.text };
        case "reasoning":
          return p.redacted
            ? { type: "redacted_thinking", data: signatureFor(p) }
            : { type: "thinking", thinking: p.text, signature: signatureFor(p) };
        case "tool_call":
          return { type: "tool_use", id: p.id, name: p.name, input: inputObject(p.arguments) };
      }
    });
  return {
    id: messageId(answer.id),
    type: "message",
    role: "assistant",
    model: answer.model,
    content,
    stop_reason: answer.stop,
    stop_sequence: answer.stopSequence ?? null,
    usage: usageToAnthropic(answer.usage ?? ZERO),
  };
}

const sse = (event: string, data: object): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** A part being written; `index` is -1 until its block has started (text and thinking start at their first content). */
type OpenBlock = {
  index: number;
  block: Record<string, unknown>;
  kind: "text" | "tool_call" | "reasoning";
  /** a tool call's arguments, forwarded only while they stay a JSON object's prefix (json-prefix.ts) */
  args: JsonObjectPrefix | null;
  origin: string | null;
  opaque: string;
  redacted: boolean;
  id?: string;
};

/**
 * The Messages stream for IR events, written as each arrives. Block indexes are the client's own (0, 1, ... in
 * order), whatever the IR's were. A text or thinking part that stays empty sends no block at all: the client sends
 * its blocks back next turn, and Anthropic refuses empty text blocks. message_start states the input counts when
 * the upstream gave them at its start; otherwise zeros there and the real counts in message_delta, whose usage the
 * SDKs take over message_start's.
 */
export function streamEncoder(): { write(e: IrEvent): string } {
  return new MessagesStreamWriter();
}

/** One answer's stream: the block now open and the next block index the client sees. */
class MessagesStreamWriter {
  private nextIndex = 0;
  private open: OpenBlock | null = null;
  private ended = false;
  // message_delta's counts replace message_start's in the SDKs: an end without usage must restate the start's.
  private startUsage: IrUsage | null = null;

  write(e: IrEvent): string {
    if (this.ended) return "";
    switch (e.type) {
      case "start":
        return this.messageStart(e);
      case "part_start":
        return this.startPart(e);
      case "delta":
        return this.delta(e);
      case "part_end":
        return this.close();
      case "finish":
        return this.finish(e);
      case "error":
        this.ended = true;
        // No block is closed first: Anthropic itself sends the error in the middle of a block.
        this.open = null;
        return sse("error", { type: "error", error: { type: anthropicErrorType(e.status), message: e.message } });
    }
  }

  private messageStart(e: IrEventOf<"start">): string {
    this.startUsage = e.usage ?? null;
    const usage = usageToAnthropic(this.startUsage ?? ZERO);
    const message = {
      id: messageId(e.id),
      type: "message",
      role: "assistant",
      model: e.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    };
    return sse("message_start", { type: "message_start", message });
  }

  private finish(e: IrEventOf<"finish">): string {
    this.ended = true;
    const usage = usageToAnthropic(e.usage ?? this.startUsage ?? ZERO);
    const end = sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: e.stop, stop_sequence: e.stopSequence ?? null },
      usage,
    });
    return this.close() + end + sse("message_stop", { type: "message_stop" });
  }

  /** The block's content_block_start, the first time its block has something to show. */
  private begin(block: OpenBlock): string {
    if (block.index >= 0) return "";
    block.index = this.nextIndex++;
    return sse("content_block_start", { type: "content_block_start", index: block.index, content_block: block.block });
  }

  private close(): string {
    const block = this.open;
    this.open = null;
    if (!block) return "";
    let out = "";
    // What closes the arguments sent into one object: "{}" for none, "" for a whole object.
    const closing = block.args?.closing();
    if (closing) out += blockDelta(block, { type: "input_json_delta", partial_json: closing });
    if (block.kind === "reasoning") {
      const signature = signatureFor(block);
      if (block.index < 0 && !signature) return "";
      // Redacted reasoning has no deltas to show: its one block goes out whole once its value is known.
      if (block.redacted) block.block = { type: "redacted_thinking", data: signature };
      out += this.begin(block);
      if (signature && !block.redacted) out += blockDelta(block, { type: "signature_delta", signature });
    }
    if (block.index < 0) return out;
    return out + sse("content_block_stop", { type: "content_block_stop", index: block.index });
  }

  private startPart(e: IrEventOf<"part_start">): string {
    const out = this.close();
    const part = e.part;
    const block: OpenBlock = {
      index: -1,
      block: { type: "text", text: "" },
      kind: part.type,
      args: part.type === "tool_call" ? new JsonObjectPrefix() : null,
      origin: null,
      opaque: "",
      redacted: false,
    };
    this.open = block;
    if (part.type === "tool_call") {
      block.block = { type: "tool_use", id: part.id, name: part.name, input: {} };
      return out + this.begin(block);
    }
    if (part.type === "reasoning")
      Object.assign(block, {
        block: { type: "thinking", thinking: "", signature: "" },
        origin: part.origin,
        opaque: part.opaque ?? "",
        redacted: part.redacted === true,
        id: part.id,
      });
    return out;
  }

  private delta(e: IrEventOf<"delta">): string {
    const block = this.open;
    if (!block) return "";
    if (block.kind === "reasoning") {
      if (e.opaque) block.opaque += e.opaque;
      return e.reasoning && !block.redacted
        ? this.begin(block) + blockDelta(block, { type: "thinking_delta", thinking: e.reasoning })
        : "";
    }
    if (block.kind === "text")
      return e.text ? this.begin(block) + blockDelta(block, { type: "text_delta", text: e.text }) : "";
    if (!e.arguments || !block.args) return "";
    const valid = block.args.feed(e.arguments);
    return valid > 0 ? blockDelta(block, { type: "input_json_delta", partial_json: e.arguments.slice(0, valid) }) : "";
  }
}

const blockDelta = (block: OpenBlock, delta: object) =>
  sse("content_block_delta", { type: "content_block_delta", index: block.index, delta });
