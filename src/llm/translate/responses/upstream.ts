// IrRequest → a Responses request for a model whose native protocol is Responses (GPT, Codex and Grok models
// called from an Anthropic or chat client), and a Responses JSON answer → IrAnswer. The gateway keeps no state
// (`store: false`), so reasoning round-trips through encrypted_content and goes back only to the model that made it.
// Dialect keys and the other choices: docs/translation.md, "Responses, upstream side" and "Responses: request to a
// Responses-native model".

import {
  originOf,
  TranslationError,
  type ImagePart,
  type IrAnswer,
  type IrMessage,
  type IrRequest,
  type IrUsage,
  type StopReason,
  type TextPart,
  type TranslateTarget,
} from "../ir";

export function encodeRequest(ir: IrRequest, target: TranslateTarget): Record<string, unknown> {
  const d = target.dialect;
  if (ir.stop?.length) throw new TranslationError("stop sequences are not supported by this model", "stop");
  const body: Record<string, unknown> = { model: ir.model };
  const instructions = ir.system.map((p) => p.text).join("\n\n");
  if (instructions) body.instructions = instructions;
  body.input = ir.messages.flatMap((m) => items(m, originOf(target)));
  // tool_choice and parallel_tool_calls only with tools: OpenAI refuses them alone.
  if (ir.tools.length) {
    body.tools = ir.tools.map((t) => ({
      type: "function",
      name: t.name,
      ...(t.description != null && { description: t.description }),
      parameters: t.parameters,
      strict: t.strict ?? false,
    }));
    if (ir.toolChoice)
      body.tool_choice =
        ir.toolChoice.type === "tool" ? { type: "function", name: ir.toolChoice.name } : ir.toolChoice.type;
    if (ir.parallelToolCalls !== undefined) body.parallel_tool_calls = ir.parallelToolCalls;
  }
  if (ir.maxOutputTokens !== undefined)
    body.max_output_tokens = Math.max(ir.maxOutputTokens, num(d.minOutputTokens, 16));
  if (d.sampling !== false) {
    if (ir.temperature !== undefined) body.temperature = ir.temperature;
    if (ir.topP !== undefined) body.top_p = ir.topP;
  }
  if (ir.reasoning && d.reasoning !== false) {
    const reasoning: Record<string, unknown> = {};
    if (d.reasoningEffort !== false) reasoning.effort = effortOf(ir.reasoning);
    const summary = d.reasoningSummary === undefined ? "auto" : d.reasoningSummary;
    if (summary != null) reasoning.summary = summary;
    if (Object.keys(reasoning).length) body.reasoning = reasoning;
    body.include = ["reasoning.encrypted_content"];
  }
  const f = ir.responseFormat;
  if (f)
    body.text = {
      format:
        f.type === "json_object"
          ? f
          : {
              type: "json_schema",
              name: f.name,
              schema: f.schema,
              ...(f.strict !== undefined && { strict: f.strict }),
            },
    };
  body.store = false;
  if (ir.stream) body.stream = true;
  return body;
}

function num(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}

/** A thinking budget → the nearest effort (Anthropic's usual budgets: 1k–4k low, up to 16k medium, more high). */
function effortOf(r: NonNullable<IrRequest["reasoning"]>): string {
  if (r.effort) return r.effort;
  const b = r.budgetTokens ?? 0;
  return b === 0 ? "medium" : b <= 4096 ? "low" : b <= 16384 ? "medium" : "high";
}

function items(m: IrMessage, origin: string): object[] {
  const out: object[] = [];
  let content: object[] | null = null; // the message item being filled, until a non-content part ends it
  const contentPart = (p: TextPart | ImagePart) => {
    if (!content) {
      content = [];
      out.push({ type: "message", role: m.role, content });
    }
    content.push(
      p.type === "text" ? { type: m.role === "assistant" ? "output_text" : "input_text", text: p.text } : inputImage(p),
    );
  };
  for (const p of m.parts) {
    if (p.type === "text" || p.type === "image") {
      if (p.type === "image" && m.role === "assistant") continue; // assistants write no images in Responses
      contentPart(p);
      continue;
    }
    content = null;
    if (p.type === "tool_call")
      out.push({ type: "function_call", call_id: p.id, name: p.name, arguments: p.arguments });
    else if (p.type === "tool_result") {
      const mark = p.isError ? "Error: " : "";
      const output =
        typeof p.content === "string"
          ? mark + p.content
          : [
              ...(mark ? [{ type: "input_text", text: mark }] : []),
              ...p.content.map((c) => (c.type === "text" ? { type: "input_text", text: c.text } : inputImage(c))),
            ];
      out.push({ type: "function_call_output", call_id: p.callId, output });
    } else if (p.type === "reasoning" && p.origin === origin && p.opaque && !p.redacted) {
      out.push({
        type: "reasoning",
        summary: p.text ? [{ type: "summary_text", text: p.text }] : [],
        encrypted_content: p.opaque,
      });
    }
  }
  return out;
}

function inputImage(p: ImagePart): object {
  const url = p.source.kind === "url" ? p.source.url : `data:${p.source.mediaType};base64,${p.source.data}`;
  return { type: "input_image", image_url: url, detail: p.detail ?? "auto" };
}

/** Responses usage → IrUsage (input_tokens already counts cached tokens). */
export function usageIn(u: any, dialect: Record<string, unknown>): IrUsage | null {
  if (!u || typeof u !== "object") return null;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const reasoning = n(u.output_tokens_details?.reasoning_tokens);
  return {
    input: n(u.input_tokens),
    cacheRead: n(u.input_tokens_details?.cached_tokens),
    cacheWrite: n(u.input_tokens_details?.cache_write_tokens),
    output: n(u.output_tokens) + (dialect.outputExcludesReasoning === true ? reasoning : 0),
    reasoning,
  };
}

/** How a Responses answer ended, in the IR's words. */
export function stopOf(status: unknown, incomplete: any, sawToolCall: boolean, sawRefusal: boolean): StopReason {
  if (status === "incomplete") return incomplete?.reason === "content_filter" ? "refusal" : "max_tokens";
  if (sawRefusal) return "refusal";
  return sawToolCall ? "tool_use" : "end_turn";
}

export function decodeAnswer(json: any, target: TranslateTarget): IrAnswer {
  // An error object sent with a 200 is not an empty answer: the seam answers 502 (translated.ts), charging nothing.
  if (!Array.isArray(json?.output) && json?.error) throw new Error("the upstream answered an error object");
  const parts: IrAnswer["parts"] = [];
  let sawRefusal = false;
  for (const item of Array.isArray(json?.output) ? json.output : []) {
    if (item?.type === "reasoning") {
      const text = reasoningText(item);
      const opaque =
        typeof item.encrypted_content === "string" && item.encrypted_content ? item.encrypted_content : undefined;
      if (text || opaque)
        parts.push({
          type: "reasoning",
          text,
          origin: originOf(target),
          ...(opaque && { opaque }),
          ...(typeof item.id === "string" && { id: item.id }),
        });
    } else if (item?.type === "message") {
      for (const c of Array.isArray(item.content) ? item.content : []) {
        if (c?.type === "output_text" && typeof c.text === "string") parts.push({ type: "text", text: c.text });
        else if (c?.type === "refusal" && typeof c.refusal === "string") {
          sawRefusal = true;
          parts.push({ type: "text", text: c.refusal });
        }
      }
    } else if (item?.type === "function_call") {
      parts.push({
        type: "tool_call",
        id: String(item.call_id ?? item.id ?? ""),
        name: String(item.name ?? ""),
        arguments: typeof item.arguments === "string" ? item.arguments : "",
      });
    }
  }
  const sawToolCall = parts.some((p) => p.type === "tool_call");
  return {
    id: String(json?.id ?? ""),
    model: String(json?.model ?? ""),
    parts,
    stop: stopOf(json?.status, json?.incomplete_details, sawToolCall, sawRefusal),
    usage: usageIn(json?.usage, target.dialect),
  };
}

/** A reasoning item's text: its raw content when present, else its summary parts, a blank line apart. */
export function reasoningText(item: any): string {
  const texts = (v: unknown) =>
    Array.isArray(v) ? v.map((p: any) => (typeof p?.text === "string" ? p.text : "")).filter(Boolean) : [];
  const content = texts(item?.content);
  return (content.length ? content : texts(item?.summary)).join("\n\n");
}
