// Chat Completions SSE → Responses SSE, event by event, as the openai SDK's responses.stream() expects it:
//   response.created, response.in_progress,
//   per item: output_item.added, [content_part.added], *.delta×N, *.done, [content_part.done], output_item.done
//   response.completed (or response.incomplete when the answer hit max tokens) with the full output and usage,
//   or response.failed when the chat stream carries an error or ends without finishing.
// Every event has an `event:` line and a `sequence_number` counting from 0. Items never interleave: chat streams
// reasoning, then text, then tool calls one after another, and each new kind closes the item before it.

import { createParser } from "eventsource-parser";
import {
  chatUsageToResponses,
  functionCallItem,
  itemId,
  messageItem,
  outputText,
  reasoningItem,
  responseObject,
  statusFor,
  type TranslateContext,
} from "./responses-shape.ts";

type TextOpen = { kind: "reasoning" | "message"; index: number; id: string; text: string };
type FunctionOpen = { kind: "function"; index: number; id: string; callId: string; name: string; args: string; chatIndex: number };
type Open = TextOpen | FunctionOpen;

/**
 * A chunk the pump sends (by identity) when the chat stream ends in the middle of an event and a failure event
 * follows: the partial event is dropped, so that the failure is read (and becomes response.failed).
 */
export const RESYNC = new Uint8Array(0);

export function createChatToResponsesStream(ctx: TranslateContext): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const output: object[] = []; // finished items, in output order
  let open: Open | null = null;
  let nextIndex = 0;
  let seq = 0;
  let usage: Record<string, unknown> | null = null;
  let finishReason: string | null = null;
  let ended = false;
  let sink!: TransformStreamDefaultController<Uint8Array>;

  const emit = (type: string, payload: object) => {
    const data = JSON.stringify({ type, ...payload, sequence_number: seq++ });
    sink.enqueue(encoder.encode(`event: ${type}\ndata: ${data}\n\n`));
  };

  function close(status: "completed" | "incomplete" = "completed"): void {
    const o = open;
    if (!o) return;
    open = null;
    const at = { item_id: o.id, output_index: o.index };
    let item: object;
    if (o.kind === "function") {
      emit("response.function_call_arguments.done", { ...at, arguments: o.args });
      item = functionCallItem(o.id, o.callId, o.name, o.args, status);
    } else if (o.kind === "reasoning") {
      emit("response.reasoning_text.done", { ...at, content_index: 0, text: o.text });
      emit("response.content_part.done", { ...at, content_index: 0, part: { type: "reasoning_text", text: o.text } });
      item = reasoningItem(o.id, o.text);
    } else {
      emit("response.output_text.done", { ...at, content_index: 0, text: o.text, logprobs: [] });
      emit("response.content_part.done", { ...at, content_index: 0, part: outputText(o.text) });
      item = messageItem(o.id, o.text, status);
    }
    emit("response.output_item.done", { output_index: o.index, item });
    output.push(item);
  }

  function openText(kind: "reasoning" | "message"): TextOpen {
    if (open && open.kind === kind) return open as TextOpen;
    close();
    const index = nextIndex++;
    const id = itemId(ctx, kind === "message" ? "msg" : "rs", index);
    const o: TextOpen = { kind, index, id, text: "" };
    open = o;
    if (kind === "message") {
      emit("response.output_item.added", { output_index: index, item: { id, type: "message", status: "in_progress", content: [], role: "assistant" } });
      emit("response.content_part.added", { item_id: id, output_index: index, content_index: 0, part: outputText("") });
    } else {
      emit("response.output_item.added", { output_index: index, item: { id, type: "reasoning", summary: [], content: [] } });
      emit("response.content_part.added", { item_id: id, output_index: index, content_index: 0, part: { type: "reasoning_text", text: "" } });
    }
    return o;
  }

  function onToolCall(tc: any): void {
    const chatIndex = typeof tc?.index === "number" ? tc.index : 0;
    let o: FunctionOpen | null = open?.kind === "function" && open.chatIndex === chatIndex ? open : null;
    if (!o) {
      close();
      const index = nextIndex++;
      const id = itemId(ctx, "fc", index);
      const callId = typeof tc?.id === "string" && tc.id ? tc.id : `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
      o = { kind: "function", index, id, callId, name: tc?.function?.name ?? "", args: "", chatIndex };
      open = o;
      emit("response.output_item.added", { output_index: index, item: functionCallItem(id, callId, o.name, "", "in_progress") });
    }
    const delta = tc?.function?.arguments;
    if (typeof delta === "string" && delta) {
      o.args += delta;
      emit("response.function_call_arguments.delta", { item_id: o.id, output_index: o.index, delta });
    }
  }

  function finish(): void {
    if (ended) return;
    ended = true;
    close(finishReason === "length" ? "incomplete" : "completed");
    const { status, incomplete_details } = statusFor(finishReason);
    const response = responseObject(ctx, status, output, usage, { incomplete_details });
    emit(status === "incomplete" ? "response.incomplete" : "response.completed", { response });
  }

  function fail(error: { code: string; message: string }): void {
    if (ended) return;
    ended = true;
    const partial = open ? [...output, partialItem(open)] : output;
    emit("response.failed", { response: responseObject(ctx, "failed", partial, usage, { error }) });
  }

  function onData(data: string): void {
    if (ended) return;
    if (data === "[DONE]") return finish();
    const chunk = JSON.parse(data);
    if (chunk?.error) {
      const e = chunk.error;
      return fail({ code: typeof e.code === "string" ? e.code : typeof e.type === "string" ? e.type : "server_error", message: String(e.message ?? "upstream error") });
    }
    if (chunk?.usage) usage = chatUsageToResponses(chunk.usage);
    const choice = chunk?.choices?.find((c: any) => (c?.index ?? 0) === 0);
    if (!choice) return;
    const d = choice.delta ?? {};
    if (typeof d.reasoning_content === "string" && d.reasoning_content) {
      const o = openText("reasoning");
      o.text += d.reasoning_content;
      emit("response.reasoning_text.delta", { item_id: o.id, output_index: o.index, content_index: 0, delta: d.reasoning_content });
    }
    if (typeof d.content === "string" && d.content) {
      const o = openText("message");
      o.text += d.content;
      emit("response.output_text.delta", { item_id: o.id, output_index: o.index, content_index: 0, delta: d.content, logprobs: [] });
    }
    if (Array.isArray(d.tool_calls)) for (const tc of d.tool_calls) onToolCall(tc);
    if (choice.finish_reason) {
      finishReason = choice.finish_reason;
      close(finishReason === "length" ? "incomplete" : "completed");
    }
  }

  const parser = createParser({
    onEvent(ev) {
      try {
        onData(ev.data);
      } catch {
        fail({ code: "upstream_protocol_error", message: "the upstream sent an event that could not be read" });
      }
    },
  });

  return new TransformStream<Uint8Array, Uint8Array>({
    start(controller) {
      sink = controller;
      const response = responseObject(ctx, "in_progress", [], null);
      emit("response.created", { response });
      emit("response.in_progress", { response });
    },
    transform(chunk) {
      if (chunk === RESYNC) {
        decoder.decode(); // a partial character, dropped with its event
        return parser.reset();
      }
      parser.feed(decoder.decode(chunk, { stream: true }));
    },
    flush() {
      parser.feed(decoder.decode());
      // Some upstreams end after the usage chunk without [DONE]; an answer that never finished is a failure.
      if (finishReason !== null) finish();
      else fail({ code: "upstream_incomplete", message: "the upstream stream ended before the answer finished" });
    },
  });
}

function partialItem(o: Open): object {
  if (o.kind === "function") return functionCallItem(o.id, o.callId, o.name, o.args, "incomplete");
  return o.kind === "reasoning" ? reasoningItem(o.id, o.text) : messageItem(o.id, o.text, "incomplete");
}
