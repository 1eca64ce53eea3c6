// A Responses SSE stream (GPT, Codex, Grok) → IrEvents, each upstream event turned into IR events at once.
// Items arrive one after another (output_index), so an IR part opens on an item's first content (a text or
// reasoning part with nothing in it is never opened: an empty thinking block upsets Anthropic clients) and closes
// on its done event; whatever belongs to no open part (hosted tool items, a stray delta) is skipped.
// A reasoning item is one IR part: its summary parts are joined with a blank line, and its encrypted_content (on
// output_item.done only) becomes the part's opaque value.

import { originOf, type IrEvent, type TranslateTarget } from "../ir";
import { reasoningText, stopOf, usageIn } from "./upstream";

type Open = { kind: "text" | "reasoning" | "tool_call"; index: number; outputIndex: number; streamed: boolean };

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
  let started = false;
  let ended = false;
  let next = 0; // the next IR part index
  let open: Open | null = null;
  let sawToolCall = false;
  let sawRefusal = false;
  let reasoningItem: { outputIndex: number; id?: string } | null = null; // added, opened at its first content

  function begin(out: IrEvent[], response: any): void {
    if (started) return;
    started = true;
    out.push({ type: "start", id: String(response?.id ?? ""), model: String(response?.model ?? ""), usage: null });
  }

  function startPart(
    out: IrEvent[],
    outputIndex: number,
    part: Extract<IrEvent, { type: "part_start" }>["part"],
  ): Open {
    begin(out, null); // a server that skipped response.created still gives the client a start
    close(out);
    const o: Open = { kind: part.type, index: next++, outputIndex, streamed: false };
    out.push({ type: "part_start", index: o.index, part });
    open = o;
    return o;
  }

  function close(out: IrEvent[]): void {
    if (!open) return;
    out.push({ type: "part_end", index: open.index });
    open = null;
  }

  const isOpen = (kind: Open["kind"], outputIndex: unknown): Open | null =>
    open && open.kind === kind && open.outputIndex === outputIndex ? open : null;

  function onItemAdded(out: IrEvent[], j: any): void {
    const item = j.item;
    if (item?.type === "reasoning") {
      close(out);
      reasoningItem = { outputIndex: j.output_index, ...(typeof item.id === "string" && { id: item.id }) };
    } else if (item?.type === "function_call") {
      sawToolCall = true;
      const o = startPart(out, j.output_index, {
        type: "tool_call",
        id: String(item.call_id ?? item.id ?? ""),
        name: String(item.name ?? ""),
      });
      if (typeof item.arguments === "string" && item.arguments) {
        o.streamed = true;
        out.push({ type: "delta", index: o.index, arguments: item.arguments });
      }
    }
    // a message opens its IR text part at its first content part; other items (hosted tools) have none
  }

  function onItemDone(out: IrEvent[], j: any): void {
    const item = j.item;
    if (item?.type === "reasoning") {
      const text = reasoningText(item);
      const opaque = typeof item.encrypted_content === "string" && item.encrypted_content ? item.encrypted_content : "";
      const o = isOpen("reasoning", j.output_index) ?? (text || opaque ? openReasoning(out, j.output_index) : null);
      if (!o) return;
      if (!o.streamed && text) out.push({ type: "delta", index: o.index, reasoning: text });
      if (opaque) out.push({ type: "delta", index: o.index, opaque });
      close(out);
    } else if (item?.type === "function_call") {
      const o = isOpen("tool_call", j.output_index);
      if (!o) return;
      if (!o.streamed && typeof item.arguments === "string" && item.arguments)
        out.push({ type: "delta", index: o.index, arguments: item.arguments });
      close(out);
    } else if (open?.outputIndex === j.output_index) close(out);
  }

  /** The reasoning part of the item added at outputIndex, opened now that it has content. */
  function openReasoning(out: IrEvent[], outputIndex: unknown): Open | null {
    if (!reasoningItem || reasoningItem.outputIndex !== outputIndex) return null;
    const id = reasoningItem.id;
    reasoningItem = null;
    return startPart(out, outputIndex as number, {
      type: "reasoning",
      origin: originOf(target),
      ...(id !== undefined && { id }),
    });
  }

  function text(out: IrEvent[], j: any, delta: unknown): void {
    if (typeof delta !== "string" || !delta) return;
    const o = isOpen("text", j.output_index) ?? startPart(out, j.output_index, { type: "text" });
    o.streamed = true;
    out.push({ type: "delta", index: o.index, text: delta });
  }

  function reasoning(out: IrEvent[], j: any, delta: unknown): void {
    if (typeof delta !== "string" || !delta) return;
    const o = isOpen("reasoning", j.output_index) ?? openReasoning(out, j.output_index);
    if (!o) return;
    o.streamed = true;
    out.push({ type: "delta", index: o.index, reasoning: delta });
  }

  function fail(out: IrEvent[], e: any): void {
    ended = true;
    const code =
      typeof e?.code === "string" && e.code ? e.code : typeof e?.type === "string" && e.type ? e.type : "server_error";
    out.push({
      type: "error",
      status: STATUS_OF_CODE[code] ?? 500,
      code,
      message: typeof e?.message === "string" ? e.message : "The upstream failed.",
    });
  }

  function onEvent(out: IrEvent[], type: string, j: any): void {
    switch (type) {
      case "response.created":
      case "response.queued":
      case "response.in_progress":
        return begin(out, j.response);
      case "response.output_item.added":
        return onItemAdded(out, j);
      case "response.output_item.done":
        return onItemDone(out, j);
      case "response.content_part.added":
        if (j.part?.type === "refusal") sawRefusal = true;
        return;
      case "response.content_part.done": {
        // a part whose text came only here (no deltas) is still delivered
        const whole =
          j.part?.type === "output_text" ? j.part.text : j.part?.type === "refusal" ? j.part.refusal : undefined;
        if (!isOpen("text", j.output_index)) text(out, j, whole);
        if (isOpen("text", j.output_index)) close(out);
        return;
      }
      case "response.output_text.delta":
        return text(out, j, j.delta);
      case "response.refusal.delta":
        sawRefusal = true;
        return text(out, j, j.delta);
      case "response.reasoning_summary_part.added": {
        // the blank line between summary parts, as reasoningText joins them
        const o = isOpen("reasoning", j.output_index);
        if (o?.streamed && j.summary_index > 0) out.push({ type: "delta", index: o.index, reasoning: "\n\n" });
        return;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        return reasoning(out, j, j.delta);
      case "response.function_call_arguments.delta": {
        const o = isOpen("tool_call", j.output_index);
        if (!o || typeof j.delta !== "string" || !j.delta) return;
        o.streamed = true;
        out.push({ type: "delta", index: o.index, arguments: j.delta });
        return;
      }
      case "response.completed":
      case "response.incomplete": {
        begin(out, j.response);
        close(out);
        ended = true;
        const r = j.response;
        out.push({
          type: "finish",
          stop: stopOf(r?.status, r?.incomplete_details, sawToolCall, sawRefusal),
          usage: usageIn(r?.usage, target.dialect),
        });
        return;
      }
      case "response.failed":
        close(out);
        return fail(out, j.response?.error);
      case "error":
        close(out);
        return fail(out, typeof j.error === "object" && j.error !== null ? j.error : j);
    }
  }

  return {
    feed(event, data) {
      if (ended) return [];
      const out: IrEvent[] = [];
      let j: any;
      try {
        j = JSON.parse(data);
      } catch {
        close(out);
        fail(out, { code: "upstream_protocol_error", message: "The upstream sent an event that could not be read." });
        return out;
      }
      const type = event ?? (typeof j?.type === "string" ? j.type : undefined);
      if (type && typeof j === "object" && j !== null) onEvent(out, type, j);
      return out;
    },
    end() {
      return []; // no terminal event: the stream ended early, and the seam says so in the client's protocol
    },
  };
}
