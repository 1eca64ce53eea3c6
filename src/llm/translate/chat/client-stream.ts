// IR events → chat.completion.chunk SSE, each written as soon as it comes, as the openai SDK and LangChain /
// the AI SDK read it: a role delta first; content, reasoning_content and tool_calls deltas (a call's index, id and
// name in its first delta, then its arguments in pieces); finish_reason on the last choice chunk; the usage chunk
// (`choices: []`) only when the client asked stream_options.include_usage (every other chunk then says
// `"usage": null`, as OpenAI does); then `data: [DONE]`. An error becomes a `data: {"error": {...}}` chunk, which
// the openai SDK raises as an APIError, and nothing follows it.
//
// Reasoning text streams as `reasoning_content` deltas; when a reasoning part ends, one `reasoning_details` delta
// carries the whole part with its sealed opaque value (chat/shared.ts), so a client that keeps reasoning_details
// can hand a Claude thinking signature back on the next turn.

import type { IrEvent, IrUsage, ReasoningPart } from "../ir";
import { openAiErrorBody } from "../../protocols/common";
import { FINISH_REASON, chatUsage, reasoningDetail } from "./shared";
import { chatId } from "./client";

type Open =
  | { kind: "text" }
  | { kind: "tool"; index: number; args: boolean }
  | ({ kind: "reasoning" } & Omit<ReasoningPart, "type">);

export function streamEncoder(request: Record<string, any>): { write(e: IrEvent): string } {
  const includeUsage = request?.stream_options?.include_usage === true;
  let head = "";
  let toolCalls = 0;
  let reasoningParts = 0;
  const open = new Map<number, Open>();
  let done = false;
  let startUsage: IrUsage | null = null; // what `start` knew, for a finish that knows nothing more

  // The fixed fields of every chunk are serialised once; only the choice varies.
  const chunk = (choices: string, usage = "null") =>
    `data: ${head}"choices":${choices}${includeUsage ? `,"usage":${usage}` : ""}}\n\n`;
  const delta = (d: object, finish: string | null = null) =>
    chunk(`[{"index":0,"delta":${JSON.stringify(d)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]`);

  return {
    write(e: IrEvent): string {
      if (done) return "";
      switch (e.type) {
        case "start":
          startUsage = e.usage ?? null;
          head = `{"id":${JSON.stringify(chatId(e.id))},"object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(e.model)},`;
          return delta({ role: "assistant", content: "" });
        case "part_start": {
          const p = e.part;
          if (p.type === "text") open.set(e.index, { kind: "text" });
          else if (p.type === "reasoning")
            open.set(e.index, {
              kind: "reasoning",
              text: "",
              origin: p.origin,
              opaque: p.opaque,
              redacted: p.redacted,
              id: p.id,
            });
          else {
            const index = toolCalls++;
            open.set(e.index, { kind: "tool", index, args: false });
            return delta({
              tool_calls: [{ index, id: p.id, type: "function", function: { name: p.name, arguments: "" } }],
            });
          }
          return "";
        }
        case "delta": {
          const o = open.get(e.index);
          if (!o) return "";
          if (o.kind === "text") return e.text ? delta({ content: e.text }) : "";
          if (o.kind === "tool") {
            if (!e.arguments) return "";
            o.args = true;
            return delta({ tool_calls: [{ index: o.index, function: { arguments: e.arguments } }] });
          }
          if (e.opaque) o.opaque = (o.opaque ?? "") + e.opaque;
          if (!e.reasoning) return "";
          o.text += e.reasoning;
          return delta({ reasoning_content: e.reasoning });
        }
        case "part_end": {
          const o = open.get(e.index);
          open.delete(e.index);
          // A call with no arguments at all (a tool without parameters) says "{}", as OpenAI does: "" is not JSON.
          if (o?.kind === "tool" && !o.args)
            return delta({ tool_calls: [{ index: o.index, function: { arguments: "{}" } }] });
          if (o?.kind !== "reasoning") return "";
          return delta({ reasoning_details: [reasoningDetail(o, reasoningParts++)] });
        }
        case "finish": {
          done = true;
          let out = delta({}, FINISH_REASON[e.stop] ?? "stop");
          const usage = e.usage ?? startUsage;
          if (includeUsage && usage) out += chunk("[]", JSON.stringify(chatUsage(usage)));
          return out + "data: [DONE]\n\n";
        }
        case "error":
          done = true;
          return `data: ${JSON.stringify({ error: errorOf(e) })}\n\n`;
      }
    },
  };
}

/** The error object of an OpenAI error body (its type follows the status), without the gateway's request id. */
function errorOf(e: Extract<IrEvent, { type: "error" }>): unknown {
  return (openAiErrorBody({ status: e.status, code: e.code, message: e.message, requestId: "" }) as { error: unknown })
    .error;
}
