// A chat upstream's SSE (chat.completion.chunk events) → IR events, each as its chunk arrives. Parts never
// interleave (a new kind or another tool call closes the open one), the terminal `finish` waits for the usage
// chunk when usage was asked for, and a stream that ends before any finish_reason gives no terminal event (the
// seam reports it as ended early). The details: docs/translation.md, "Chat: a chat-native model's stream".

import { originOf, type IrEvent, type IrUsage, type StopReason, type TranslateTarget } from "../ir";
import { stopReasonOf, usageFromChat } from "./shared";
import { dialectOf, newCallId, reasoningOf, thoughtSignatureOf } from "./upstream";

type Open =
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
  const d = dialectOf(target);
  let started = false;
  let ended = false;
  let open: Open | null = null;
  let next = 0;
  const closed = new Set<number>(); // chat indexes of calls already closed
  let calledTools = false;
  let stop: StopReason | null = null;
  let usage: IrUsage | null = null;

  const close = (out: IrEvent[]) => {
    if (!open) return;
    out.push({ type: "part_end", index: open.index });
    if (open.kind === "tool") closed.add(open.chatIndex);
    open = null;
  };
  const openText = (kind: "text" | "reasoning", out: IrEvent[]): number => {
    if (open?.kind === kind) return open.index;
    close(out);
    open = { kind, index: next++ };
    out.push({
      type: "part_start",
      index: open.index,
      part: kind === "text" ? { type: "text" } : { type: "reasoning", origin: originOf(target) },
    });
    return open.index;
  };
  const finish = (out: IrEvent[]) => {
    ended = true;
    out.push({ type: "finish", stop: stop ?? "end_turn", usage });
  };

  function onToolCall(tc: any, out: IrEvent[]): void {
    const chatIndex = typeof tc?.index === "number" ? tc.index : 0;
    const id = typeof tc?.id === "string" && tc.id ? tc.id : undefined;
    const same = open?.kind === "tool" && open.chatIndex === chatIndex && (id === undefined || id === open.id);
    if (!same) {
      if (id === undefined && closed.has(chatIndex)) return;
      close(out);
      const sig = thoughtSignatureOf(tc);
      if (sig) {
        // Gemini's signature for this call: a reasoning part of its own just before it (chat/upstream.ts).
        const index = next++;
        out.push(
          { type: "part_start", index, part: { type: "reasoning", origin: originOf(target) } },
          { type: "delta", index, opaque: sig },
          { type: "part_end", index },
        );
      }
      open = { kind: "tool", index: next++, chatIndex, id: id ?? newCallId() };
      calledTools = true;
      out.push({
        type: "part_start",
        index: open.index,
        part: { type: "tool_call", id: open.id, name: String(tc?.function?.name ?? "") },
      });
    }
    const args = tc?.function?.arguments;
    if (typeof args === "string" && args) out.push({ type: "delta", index: open!.index, arguments: args });
  }

  function onChunk(chunk: any, out: IrEvent[]): void {
    if (typeof chunk?.error === "object" && chunk.error !== null) {
      const e = chunk.error;
      const status = typeof e.code === "number" ? e.code : (STATUS_BY_TYPE[e.type] ?? 500);
      ended = true;
      out.push({
        type: "error",
        status,
        code: typeof e.code === "string" ? e.code : typeof e.type === "string" ? e.type : "upstream_error",
        message: typeof e.message === "string" ? e.message : "The upstream failed.",
      });
      return;
    }
    const u = usageFromChat(chunk?.usage);
    if (u) usage = u;
    const choice = Array.isArray(chunk?.choices) ? chunk.choices.find((c: any) => (c?.index ?? 0) === 0) : undefined;
    // Started by the first chunk about the answer: some upstreams lead with a chunk of no choices (Azure's
    // prompt_filter_results, with an empty id).
    if (!started && (choice || u)) {
      started = true;
      out.push({
        type: "start",
        id: typeof chunk?.id === "string" && chunk.id ? chunk.id : newCallId(),
        model: typeof chunk?.model === "string" ? chunk.model : "",
        usage: null,
      });
    }
    if (!choice) {
      if (stop !== null && u) finish(out); // the usage chunk after finish_reason
      return;
    }
    const delta = choice.delta ?? {};
    const reasoning = reasoningOf(delta, d);
    if (reasoning) out.push({ type: "delta", index: openText("reasoning", out), reasoning });
    if (typeof delta.content === "string" && delta.content)
      out.push({ type: "delta", index: openText("text", out), text: delta.content });
    if (typeof delta.refusal === "string" && delta.refusal)
      out.push({ type: "delta", index: openText("text", out), text: delta.refusal });
    if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) onToolCall(tc, out);
    if (choice.finish_reason) {
      close(out);
      stop = stopReasonOf(choice.finish_reason, calledTools);
      if (u) finish(out);
    }
  }

  return {
    feed(_event, data) {
      if (ended) return [];
      const out: IrEvent[] = [];
      if (data === "[DONE]") {
        if (stop !== null) finish(out);
        else ended = true;
        return out;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        ended = true;
        return [
          {
            type: "error",
            status: 502,
            code: "upstream_bad_response",
            message: "The upstream sent a stream event that is not JSON.",
          },
        ];
      }
      onChunk(chunk, out);
      return out;
    },
    end() {
      if (ended) return [];
      ended = true;
      const out: IrEvent[] = [];
      if (stop !== null) finish(out);
      return out;
    },
  };
}
