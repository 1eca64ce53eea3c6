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
  let next = 0;
  // Anthropic's block index → the IR index, for the blocks kept; skipped blocks are absent.
  const kept = new Map<number, number>();
  let usage: Record<string, any> | null = null;
  let stop: StopReason = "end_turn";
  let stopSequence: string | null = null;
  let done = false;
  let started = false;

  function blockStart(ev: any): IrEvent[] {
    const b = ev.content_block;
    const index = next;
    const out: IrEvent[] = [];
    if (b?.type === "text") {
      out.push({ type: "part_start", index, part: { type: "text" } });
      if (b.text) out.push({ type: "delta", index, text: String(b.text) });
    } else if (b?.type === "thinking") {
      out.push({ type: "part_start", index, part: { type: "reasoning", origin: originOf(target) } });
      if (b.thinking) out.push({ type: "delta", index, reasoning: String(b.thinking) });
      if (b.signature) out.push({ type: "delta", index, opaque: String(b.signature) });
    } else if (b?.type === "redacted_thinking") {
      out.push({
        type: "part_start",
        index,
        part: { type: "reasoning", origin: originOf(target), redacted: true, opaque: String(b.data ?? "") },
      });
    } else if (b?.type === "tool_use") {
      out.push({
        type: "part_start",
        index,
        part: { type: "tool_call", id: fromAnthropicToolId(String(b.id)), name: String(b.name) },
      });
      if (b.input && typeof b.input === "object" && Object.keys(b.input).length)
        out.push({ type: "delta", index, arguments: JSON.stringify(b.input) });
    } else return out;
    kept.set(ev.index, index);
    next++;
    return out;
  }

  function blockDelta(ev: any): IrEvent[] {
    const index = kept.get(ev.index);
    const d = ev.delta;
    if (index === undefined || !d) return [];
    if (d.type === "text_delta" && d.text) return [{ type: "delta", index, text: String(d.text) }];
    if (d.type === "thinking_delta" && d.thinking) return [{ type: "delta", index, reasoning: String(d.thinking) }];
    if (d.type === "signature_delta" && d.signature) return [{ type: "delta", index, opaque: String(d.signature) }];
    if (d.type === "input_json_delta" && d.partial_json)
      return [{ type: "delta", index, arguments: String(d.partial_json) }];
    return [];
  }

  function feed(event: string | undefined, data: string): IrEvent[] {
    if (done) return [];
    let ev: any;
    try {
      ev = JSON.parse(data);
    } catch {
      done = true;
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
    if (!started && type !== "message_start" && type !== "error" && type !== "ping") {
      started = true;
      return [{ type: "start", id: "", model: "", usage: null }, ...feed(event, data)];
    }
    switch (type) {
      case "message_start": {
        const m = ev.message ?? {};
        // A late message_start (after a start given for it) is not a second answer: its counts sit under later ones.
        if (started) {
          usage = mergeUsage(mergeUsage(null, m.usage), usage);
          return [];
        }
        started = true;
        usage = mergeUsage(null, m.usage);
        return [
          { type: "start", id: String(m.id ?? ""), model: String(m.model ?? ""), usage: usageFromAnthropic(usage) },
        ];
      }
      case "content_block_start":
        return blockStart(ev);
      case "content_block_delta":
        return blockDelta(ev);
      case "content_block_stop": {
        const index = kept.get(ev.index);
        return index === undefined ? [] : [{ type: "part_end", index }];
      }
      case "message_delta":
        if (ev.delta?.stop_reason) stop = stopFromAnthropic(ev.delta.stop_reason);
        if (typeof ev.delta?.stop_sequence === "string") stopSequence = ev.delta.stop_sequence;
        usage = mergeUsage(usage, ev.usage);
        return [];
      case "message_stop":
        done = true;
        return [{ type: "finish", stop, stopSequence, usage: usageFromAnthropic(usage) }];
      case "error": {
        done = true;
        const type = typeof ev.error?.type === "string" ? ev.error.type : "api_error";
        return [
          {
            type: "error",
            status: statusOfErrorType(type),
            code: type,
            message: String(ev.error?.message ?? "upstream error"),
          },
        ];
      }
      default:
        return []; // ping, and event types added later
    }
  }

  // A stream that closes before message_stop ended early: no terminal event, the seam reports it.
  return { feed, end: () => [] };
}
