// IR events → chat.completion.chunk SSE, each written as soon as it comes, in the order the openai SDK, LangChain
// and the AI SDK read it (role delta, content and tool-call deltas, finish_reason, usage only when asked, [DONE]).
// A finished reasoning part also goes out whole in `reasoning_details` with its sealed opaque value, so a client
// that keeps them can hand a Claude thinking signature back. The details: docs/translation.md, "Chat: stream to a
// chat client".

import type { IrEvent, IrEventOf, IrUsage, ReasoningPart } from "../ir";
import { openAiErrorBody } from "../../protocols/common";
import { FINISH_REASON, chatUsage, reasoningDetail } from "./shared";
import { chatId } from "./client";

type OpenPart =
  | { kind: "text" }
  | { kind: "tool"; index: number; args: boolean }
  | ({ kind: "reasoning" } & Omit<ReasoningPart, "type">);

export function streamEncoder(request: Record<string, any>, requestId?: string): { write(e: IrEvent): string } {
  return new ChatStreamWriter(request?.stream_options?.include_usage === true, requestId);
}

/** One answer's chunks: the fixed head every chunk repeats, and the parts open by their IR index. */
class ChatStreamWriter {
  private head = "";
  private toolCalls = 0;
  private reasoningParts = 0;
  private readonly open = new Map<number, OpenPart>();
  private done = false;
  /** what `start` knew, for a finish that knows nothing more */
  private startUsage: IrUsage | null = null;

  constructor(
    private readonly includeUsage: boolean,
    private readonly requestId: string | undefined,
  ) {}

  write(e: IrEvent): string {
    if (this.done) return "";
    switch (e.type) {
      case "start":
        return this.start(e);
      case "part_start":
        return this.partStart(e);
      case "delta":
        return this.delta(e);
      case "part_end":
        return this.partEnd(e);
      case "finish":
        return this.finish(e);
      case "error":
        this.done = true;
        // the body of the gateway's own errors, as a native stream's error event is (llm/call-failures.ts)
        return `data: ${JSON.stringify(openAiErrorBody({ status: e.status, code: e.code, message: e.message, requestId: this.requestId ?? "" }))}\n\n`;
    }
  }

  // The fixed fields of every chunk are serialised once; only the choice varies.
  private chunk(choices: string, usage = "null"): string {
    return `data: ${this.head}"choices":${choices}${this.includeUsage ? `,"usage":${usage}` : ""}}\n\n`;
  }

  private choiceDelta(fields: object, finishReason: string | null = null): string {
    return this.chunk(
      `[{"index":0,"delta":${JSON.stringify(fields)},"logprobs":null,"finish_reason":${JSON.stringify(finishReason)}}]`,
    );
  }

  private start(e: IrEventOf<"start">): string {
    this.startUsage = e.usage ?? null;
    this.head = `{"id":${JSON.stringify(chatId(e.id))},"object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(e.model)},`;
    return this.choiceDelta({ role: "assistant", content: "" });
  }

  private partStart(e: IrEventOf<"part_start">): string {
    const part = e.part;
    if (part.type === "text") this.open.set(e.index, { kind: "text" });
    else if (part.type === "reasoning") {
      const { origin, opaque, redacted, id } = part;
      this.open.set(e.index, { kind: "reasoning", text: "", origin, opaque, redacted, id });
    } else {
      const index = this.toolCalls++;
      this.open.set(e.index, { kind: "tool", index, args: false });
      return this.choiceDelta({
        tool_calls: [{ index, id: part.id, type: "function", function: { name: part.name, arguments: "" } }],
      });
    }
    return "";
  }

  private delta(e: IrEventOf<"delta">): string {
    const open = this.open.get(e.index);
    if (!open) return "";
    if (open.kind === "text") return e.text ? this.choiceDelta({ content: e.text }) : "";
    if (open.kind === "tool") {
      if (!e.arguments) return "";
      open.args = true;
      return this.choiceDelta({ tool_calls: [{ index: open.index, function: { arguments: e.arguments } }] });
    }
    if (e.opaque) open.opaque = (open.opaque ?? "") + e.opaque;
    if (!e.reasoning) return "";
    open.text += e.reasoning;
    return this.choiceDelta({ reasoning_content: e.reasoning });
  }

  private partEnd(e: IrEventOf<"part_end">): string {
    const open = this.open.get(e.index);
    this.open.delete(e.index);
    // A call with no arguments at all (a tool without parameters) says "{}", as OpenAI does: "" is not JSON.
    if (open?.kind === "tool" && !open.args)
      return this.choiceDelta({ tool_calls: [{ index: open.index, function: { arguments: "{}" } }] });
    if (open?.kind !== "reasoning") return "";
    return this.choiceDelta({ reasoning_details: [reasoningDetail(open, this.reasoningParts++)] });
  }

  private finish(e: IrEventOf<"finish">): string {
    this.done = true;
    let out = this.choiceDelta({}, FINISH_REASON[e.stop] ?? "stop");
    const usage = e.usage ?? this.startUsage;
    if (this.includeUsage && usage) out += this.chunk("[]", JSON.stringify(chatUsage(usage)));
    return out + "data: [DONE]\n\n";
  }
}
