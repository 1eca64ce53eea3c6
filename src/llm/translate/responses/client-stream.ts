// IrEvents → the Responses SSE that the openai SDK's responses.stream() and Codex CLI read, each event written as it
// comes, in the order they expect (created, in_progress, per item added / content / done, then completed,
// incomplete or failed), each with an `event:` line and a sequence_number from 0. Reasoning is written as a summary:
// Codex shows summaries. A custom tool's freeform input is read out of its streaming arguments (custom-input.ts).

import type { IrEvent, IrEventOf, IrUsage, StopReason } from "../ir";
import { customInputReader } from "./custom-input";
import {
  answerContext,
  customInput,
  customToolCallItem,
  functionCallItem,
  itemId,
  messageItem,
  NO_ARGUMENTS,
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

type OpenItem =
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

type Emit = (type: string, payload: object) => void;
type ItemStatus = "completed" | "incomplete";

/** What each kind of output item writes as its deltas come, when it is done, and when a failure cuts it. */
interface ItemKind<Item extends OpenItem> {
  delta(item: Item, e: IrEventOf<"delta">, emit: Emit): void;
  /** the item's closing events; returns the finished item for output_item.done and the final response */
  done(item: Item, status: ItemStatus, emit: Emit): object;
  /** the item as response.failed lists it */
  incomplete(item: Item): object;
}

const at = (item: OpenItem) => ({ item_id: item.id, output_index: item.index });

const ITEM_KINDS: { [Kind in OpenItem["kind"]]: ItemKind<Extract<OpenItem, { kind: Kind }>> } = {
  message: {
    delta(item, e, emit) {
      if (!e.text) return;
      item.text += e.text;
      emit("response.output_text.delta", { ...at(item), content_index: 0, delta: e.text, logprobs: [] });
    },
    done(item, status, emit) {
      emit("response.output_text.done", { ...at(item), content_index: 0, text: item.text, logprobs: [] });
      emit("response.content_part.done", { ...at(item), content_index: 0, part: outputText(item.text) });
      return messageItem(item.id, item.text, status);
    },
    incomplete: (item) => messageItem(item.id, item.text, "incomplete"),
  },
  reasoning: {
    delta(item, e, emit) {
      if (e.opaque) item.opaque += e.opaque;
      if (!e.reasoning) return;
      if (!item.summaryOpen) {
        item.summaryOpen = true;
        emit("response.reasoning_summary_part.added", {
          ...at(item),
          summary_index: 0,
          part: { type: "summary_text", text: "" },
        });
      }
      item.text += e.reasoning;
      emit("response.reasoning_summary_text.delta", { ...at(item), summary_index: 0, delta: e.reasoning });
    },
    done(item, _status, emit) {
      if (item.summaryOpen) {
        emit("response.reasoning_summary_text.done", { ...at(item), summary_index: 0, text: item.text });
        emit("response.reasoning_summary_part.done", {
          ...at(item),
          summary_index: 0,
          part: { type: "summary_text", text: item.text },
        });
      }
      return reasoningItem(item.id, item.text, sealedReasoning(item.origin, item.opaque || undefined, item.redacted));
    },
    incomplete: (item) => reasoningItem(item.id, item.text, undefined),
  },
  function: {
    delta(item, e, emit) {
      if (!e.arguments) return;
      item.args += e.arguments;
      emit("response.function_call_arguments.delta", { ...at(item), delta: e.arguments });
    },
    done(item, status, emit) {
      // A call with no arguments at all (a tool without parameters) says "{}", as OpenAI does: "" is not JSON.
      if (!item.args) {
        item.args = NO_ARGUMENTS;
        emit("response.function_call_arguments.delta", { ...at(item), delta: NO_ARGUMENTS });
      }
      emit("response.function_call_arguments.done", { ...at(item), name: item.tool.name, arguments: item.args });
      return functionCallItem(item.id, item.callId, item.tool, item.args, status);
    },
    incomplete: (item) => functionCallItem(item.id, item.callId, item.tool, item.args, "incomplete"),
  },
  custom: {
    delta(item, e, emit) {
      if (!e.arguments) return;
      item.args += e.arguments;
      const text = item.reader.feed(e.arguments);
      if (!text) return;
      item.sent += text;
      emit("response.custom_tool_call_input.delta", { ...at(item), delta: text });
    },
    done(item, status, emit) {
      // what the reader could not stream (arguments of another shape) follows whole; done has the input in full
      const input = customInput(item.args);
      if (input.startsWith(item.sent) && input.length > item.sent.length)
        emit("response.custom_tool_call_input.delta", { ...at(item), delta: input.slice(item.sent.length) });
      emit("response.custom_tool_call_input.done", { ...at(item), input });
      return customToolCallItem(item.id, item.callId, item.tool, input, status);
    },
    incomplete: (item) => customToolCallItem(item.id, item.callId, item.tool, customInput(item.args), "incomplete"),
  },
};

/** The table's row for an item, typed for that item. */
const kindOf = <Item extends OpenItem>(item: Item) => ITEM_KINDS[item.kind] as unknown as ItemKind<Item>;

export function streamEncoder(request: Record<string, any>): { write(e: IrEvent): string } {
  return new ResponsesStreamWriter(request);
}

/** One answer's stream: the response context, the item now open and the items done, each event numbered. */
class ResponsesStreamWriter {
  private ctx: AnswerContext | null = null;
  private sequence = 0;
  private out = "";
  private open: OpenItem | null = null;
  private usage: IrUsage | null = null;
  private ended = false;
  private readonly output: object[] = [];
  private readonly emit: Emit = (type, payload) => {
    this.out += `event: ${type}\ndata: ${JSON.stringify({ type, ...payload, sequence_number: this.sequence++ })}\n\n`;
  };

  constructor(private readonly request: Record<string, any>) {}

  write(e: IrEvent): string {
    if (this.ended) return "";
    this.out = "";
    if (e.type === "start") {
      this.ctx ??= this.begin(e.id, e.model);
      if (e.usage) this.usage = e.usage;
      return this.out;
    }
    const ctx = (this.ctx ??= this.begin(
      `resp_${crypto.randomUUID().replaceAll("-", "")}`,
      String(this.request.model ?? ""),
    ));
    if (e.type === "part_start") this.startItem(ctx, e.part);
    else if (e.type === "delta") {
      if (this.open) kindOf(this.open).delta(this.open, e, this.emit);
    } else if (e.type === "part_end") this.close("completed");
    else {
      this.ended = true;
      if (e.type === "finish") this.finish(ctx, e.stop, e.usage);
      else this.fail(ctx, e.code, e.message);
    }
    return this.out;
  }

  private begin(id: string, model: string): AnswerContext {
    const ctx = answerContext(this.request, id, model);
    const response = responseObject(ctx, "in_progress", [], null);
    this.emit("response.created", { response });
    this.emit("response.in_progress", { response });
    return ctx;
  }

  private startItem(ctx: AnswerContext, part: IrEventOf<"part_start">["part"]): void {
    this.close("completed");
    const index = this.output.length;
    if (part.type === "text") {
      const id = itemId(ctx, "msg", index);
      this.open = { kind: "message", index, id, text: "" };
      this.emit("response.output_item.added", {
        output_index: index,
        item: { id, type: "message", status: "in_progress", content: [], role: "assistant" },
      });
      this.emit("response.content_part.added", {
        item_id: id,
        output_index: index,
        content_index: 0,
        part: outputText(""),
      });
    } else if (part.type === "reasoning") {
      const id = itemId(ctx, "rs", index);
      const { origin, redacted } = part;
      this.open = {
        kind: "reasoning",
        index,
        id,
        text: "",
        summaryOpen: false,
        origin,
        opaque: part.opaque ?? "",
        redacted,
      };
      this.emit("response.output_item.added", { output_index: index, item: { id, type: "reasoning", summary: [] } });
    } else this.startToolCall(ctx, index, part);
  }

  private startToolCall(ctx: AnswerContext, index: number, part: { id: string; name: string }): void {
    const custom = ctx.customTools.has(part.name);
    const id = itemId(ctx, custom ? "ctc" : "fc", index);
    const tool = toolRef(ctx, part.name);
    this.open = custom
      ? { kind: "custom", index, id, callId: part.id, tool, args: "", reader: customInputReader(), sent: "" }
      : { kind: "function", index, id, callId: part.id, tool, args: "" };
    const item = custom
      ? customToolCallItem(id, part.id, tool, "", "in_progress")
      : functionCallItem(id, part.id, tool, "", "in_progress");
    this.emit("response.output_item.added", { output_index: index, item });
  }

  private close(status: ItemStatus): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    const item = kindOf(open).done(open, status, this.emit);
    this.emit("response.output_item.done", { output_index: open.index, item });
    this.output.push(item);
  }

  private finish(ctx: AnswerContext, stop: StopReason, final: IrUsage | null): void {
    const { status, incomplete_details } = statusFor(stop);
    this.close(status === "incomplete" ? "incomplete" : "completed");
    // The item the limit cut was closed before the stop reason was known: the final response says it.
    const last = this.output.at(-1) as { status?: string } | undefined;
    if (status === "incomplete" && last?.status) last.status = "incomplete";
    const response = responseObject(ctx, status, this.output, usageOut(final ?? this.usage), { incomplete_details });
    this.emit(status === "incomplete" ? "response.incomplete" : "response.completed", { response });
  }

  private fail(ctx: AnswerContext, code: string, message: string): void {
    const open = this.open;
    this.open = null;
    const output = open ? [...this.output, kindOf(open).incomplete(open)] : this.output;
    this.emit("response.failed", {
      response: responseObject(ctx, "failed", output, usageOut(this.usage), { error: { code, message } }),
    });
  }
}
