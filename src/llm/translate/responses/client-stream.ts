// IrEvents → the Responses SSE the openai SDK's responses.stream() and Codex CLI read, each event written as it
// comes: response.created, response.in_progress, then per item output_item.added, its content events,
// output_item.done, and response.completed / response.incomplete with the whole output and usage (or
// response.failed for an error). Every event has an `event:` line and a sequence_number counting from 0.
//
// Reasoning is written as a summary (reasoning_summary_*): Codex shows summaries, and Claude's thinking text is
// itself summarised. A custom tool's freeform input is read out of the function arguments it travels in as they
// stream (custom-input.ts).

import type { IrEvent, IrUsage, StopReason } from "../ir";
import { customInputReader } from "./custom-input";
import {
  answerContext,
  customInput,
  customToolCallItem,
  functionCallItem,
  itemId,
  messageItem,
  outputText,
  reasoningItem,
  responseObject,
  sealedReasoning,
  statusFor,
  toolRef,
  usageOut,
  type AnswerContext,
  type ToolRef,
} from "./shape";

type Open =
  | { kind: "message"; index: number; id: string; text: string }
  | {
      kind: "reasoning";
      index: number;
      id: string;
      text: string;
      summaryOpen: boolean;
      origin: string | null;
      opaque: string;
      redacted?: boolean;
    }
  | { kind: "function"; index: number; id: string; callId: string; tool: ToolRef; args: string }
  | {
      kind: "custom";
      index: number;
      id: string;
      callId: string;
      tool: ToolRef;
      args: string;
      reader: ReturnType<typeof customInputReader>;
      sent: string;
    };

export function streamEncoder(request: Record<string, any>): { write(e: IrEvent): string } {
  let ctx: AnswerContext | null = null;
  let seq = 0;
  let out = "";
  let open: Open | null = null;
  let usage: IrUsage | null = null;
  let ended = false;
  const output: object[] = [];

  const emit = (type: string, payload: object) => {
    out += `event: ${type}\ndata: ${JSON.stringify({ type, ...payload, sequence_number: seq++ })}\n\n`;
  };

  function begin(id: string, model: string): AnswerContext {
    const c = answerContext(request, id, model);
    const response = responseObject(c, "in_progress", [], null);
    emit("response.created", { response });
    emit("response.in_progress", { response });
    return c;
  }

  function startPart(c: AnswerContext, part: Extract<IrEvent, { type: "part_start" }>["part"]): void {
    close("completed");
    const index = output.length;
    if (part.type === "text") {
      const id = itemId(c, "msg", index);
      open = { kind: "message", index, id, text: "" };
      emit("response.output_item.added", {
        output_index: index,
        item: { id, type: "message", status: "in_progress", content: [], role: "assistant" },
      });
      emit("response.content_part.added", { item_id: id, output_index: index, content_index: 0, part: outputText("") });
    } else if (part.type === "reasoning") {
      const id = itemId(c, "rs", index);
      open = {
        kind: "reasoning",
        index,
        id,
        text: "",
        summaryOpen: false,
        origin: part.origin,
        opaque: part.opaque ?? "",
        redacted: part.redacted,
      };
      emit("response.output_item.added", { output_index: index, item: { id, type: "reasoning", summary: [] } });
    } else {
      const custom = c.customTools.has(part.name);
      const id = itemId(c, custom ? "ctc" : "fc", index);
      const tool = toolRef(c, part.name);
      open = custom
        ? { kind: "custom", index, id, callId: part.id, tool, args: "", reader: customInputReader(), sent: "" }
        : { kind: "function", index, id, callId: part.id, tool, args: "" };
      const item = custom
        ? customToolCallItem(id, part.id, tool, "", "in_progress")
        : functionCallItem(id, part.id, tool, "", "in_progress");
      emit("response.output_item.added", { output_index: index, item });
    }
  }

  function delta(e: Extract<IrEvent, { type: "delta" }>): void {
    const o = open;
    if (!o) return;
    const at = { item_id: o.id, output_index: o.index };
    if (o.kind === "message" && e.text) {
      o.text += e.text;
      emit("response.output_text.delta", { ...at, content_index: 0, delta: e.text, logprobs: [] });
    } else if (o.kind === "reasoning") {
      if (e.opaque) o.opaque += e.opaque;
      if (!e.reasoning) return;
      if (!o.summaryOpen) {
        o.summaryOpen = true;
        emit("response.reasoning_summary_part.added", {
          ...at,
          summary_index: 0,
          part: { type: "summary_text", text: "" },
        });
      }
      o.text += e.reasoning;
      emit("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta: e.reasoning });
    } else if ((o.kind === "function" || o.kind === "custom") && e.arguments) {
      o.args += e.arguments;
      if (o.kind === "function") emit("response.function_call_arguments.delta", { ...at, delta: e.arguments });
      else {
        const text = o.reader.feed(e.arguments);
        if (text) {
          o.sent += text;
          emit("response.custom_tool_call_input.delta", { ...at, delta: text });
        }
      }
    }
  }

  function close(status: "completed" | "incomplete"): void {
    const o = open;
    if (!o) return;
    open = null;
    const at = { item_id: o.id, output_index: o.index };
    let item: object;
    if (o.kind === "message") {
      emit("response.output_text.done", { ...at, content_index: 0, text: o.text, logprobs: [] });
      emit("response.content_part.done", { ...at, content_index: 0, part: outputText(o.text) });
      item = messageItem(o.id, o.text, status);
    } else if (o.kind === "reasoning") {
      if (o.summaryOpen) {
        emit("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: o.text });
        emit("response.reasoning_summary_part.done", {
          ...at,
          summary_index: 0,
          part: { type: "summary_text", text: o.text },
        });
      }
      item = reasoningItem(o.id, o.text, sealedReasoning(o.origin, o.opaque || undefined, o.redacted));
    } else if (o.kind === "function") {
      emit("response.function_call_arguments.done", { ...at, name: o.tool.name, arguments: o.args });
      item = functionCallItem(o.id, o.callId, o.tool, o.args, status);
    } else {
      // what the reader could not stream (arguments of another shape) follows whole; done has the input in full
      const input = customInput(o.args);
      if (input.startsWith(o.sent) && input.length > o.sent.length)
        emit("response.custom_tool_call_input.delta", { ...at, delta: input.slice(o.sent.length) });
      emit("response.custom_tool_call_input.done", { ...at, input });
      item = customToolCallItem(o.id, o.callId, o.tool, input, status);
    }
    emit("response.output_item.done", { output_index: o.index, item });
    output.push(item);
  }

  function finish(c: AnswerContext, stop: StopReason, final: IrUsage | null): void {
    const { status, incomplete_details } = statusFor(stop);
    close(status === "incomplete" ? "incomplete" : "completed");
    // The item the limit cut was closed before the stop reason was known: the final response says it.
    const last = output.at(-1) as { status?: string } | undefined;
    if (status === "incomplete" && last?.status) last.status = "incomplete";
    const response = responseObject(c, status, output, usageOut(final ?? usage), { incomplete_details });
    emit(status === "incomplete" ? "response.incomplete" : "response.completed", { response });
  }

  function fail(c: AnswerContext, code: string, message: string): void {
    const o = open;
    open = null;
    const partial = o ? [...output, partialItem(o)] : output;
    emit("response.failed", {
      response: responseObject(c, "failed", partial, usageOut(usage), { error: { code, message } }),
    });
  }

  return {
    write(e: IrEvent): string {
      if (ended) return "";
      out = "";
      if (e.type === "start") {
        ctx ??= begin(e.id, e.model);
        if (e.usage) usage = e.usage;
        return out;
      }
      const c = (ctx ??= begin(`resp_${crypto.randomUUID().replaceAll("-", "")}`, String(request.model ?? "")));
      if (e.type === "part_start") startPart(c, e.part);
      else if (e.type === "delta") delta(e);
      else if (e.type === "part_end") close("completed");
      else {
        ended = true;
        if (e.type === "finish") finish(c, e.stop, e.usage);
        else fail(c, e.code, e.message);
      }
      return out;
    },
  };
}

function partialItem(o: Open): object {
  if (o.kind === "message") return messageItem(o.id, o.text, "incomplete");
  if (o.kind === "reasoning") return reasoningItem(o.id, o.text, undefined);
  if (o.kind === "custom") return customToolCallItem(o.id, o.callId, o.tool, customInput(o.args), "incomplete");
  return functionCallItem(o.id, o.callId, o.tool, o.args, "incomplete");
}
