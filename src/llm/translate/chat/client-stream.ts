// IR events → chat.completion.chunk SSE, each written as soon as it comes, in the order the openai SDK, LangChain
// and the AI SDK read it (role delta, content and tool-call deltas, finish_reason, usage only when asked, [DONE]).
// A finished reasoning part also goes out whole in `reasoning_details` with its sealed opaque value, so a client
// that keeps them can hand a Claude thinking signature back. The details: docs/translation.md, "Chat: stream to a
// chat client".

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
