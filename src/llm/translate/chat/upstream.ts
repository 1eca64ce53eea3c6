// The chat upstream side: an IR request written as a Chat Completions body for an OpenAI-compatible provider, and
// its JSON answer read back, in the shape every OpenAI-compatible upstream accepts (one system message, tool
// results as `tool` messages, Gemini's thought signatures carried as reasoning parts). Dialect keys and the
// choices: docs/translation.md, "Chat: request to a chat-native model".

import {
  originOf,
  TranslationError,
  type ImagePart,
  type IrAnswer,
  type IrMessage,
  type IrRequest,
  type TextPart,
  type TranslateTarget,
} from "../ir";
import { stopReasonOf, usageFromChat } from "./shared";

type ChatMessage = Record<string, unknown>;

export interface ChatDialect {
  maxTokensField: "max_completion_tokens" | "max_tokens";
  reasoningField?: string;
  reasoningEffort: boolean;
  sampling: boolean;
  streamUsage: boolean;
  images: boolean;
  parallelToolCalls: boolean;
  thoughtSignatures: boolean;
}

export function dialectOf(target: TranslateTarget): ChatDialect {
  const d = target.dialect ?? {};
  return {
    maxTokensField: d.maxTokensField === "max_tokens" ? "max_tokens" : "max_completion_tokens",
    reasoningField: typeof d.reasoningField === "string" ? d.reasoningField : undefined,
    reasoningEffort: d.reasoningEffort === true && d.reasoning !== false,
    sampling: d.sampling !== false,
    streamUsage: d.streamUsage !== false,
    images: d.images !== false,
    parallelToolCalls: d.parallelToolCalls !== false,
    thoughtSignatures: d.thoughtSignatures === true,
  };
}

export function encodeRequest(req: IrRequest, target: TranslateTarget): Record<string, unknown> {
  const d = dialectOf(target);
  const messages: ChatMessage[] = [];
  if (req.system.length) messages.push({ role: "system", content: req.system.map((p) => p.text).join("\n\n") });
  merged(req.messages).forEach((m, i) =>
    m.role === "user" ? userMessages(m, i, d, messages) : assistantMessage(m, originOf(target), d, messages),
  );

  const out: Record<string, unknown> = { model: req.model, messages };
  if (req.tools.length) {
    out.tools = req.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description != null && { description: t.description }),
        parameters: t.parameters,
        ...(t.strict != null && { strict: t.strict }),
      },
    }));
    const c = req.toolChoice;
    if (c) out.tool_choice = c.type === "tool" ? { type: "function", function: { name: c.name } } : c.type;
    if (req.parallelToolCalls != null && d.parallelToolCalls) out.parallel_tool_calls = req.parallelToolCalls;
  }
  if (req.maxOutputTokens != null) out[d.maxTokensField] = req.maxOutputTokens;
  if (d.sampling) {
    if (req.temperature != null) out.temperature = req.temperature;
    if (req.topP != null) out.top_p = req.topP;
  }
  if (req.stop?.length) out.stop = req.stop;
  const effort = effortOf(req.reasoning);
  if (effort && d.reasoningEffort) out.reasoning_effort = effort;
  const f = req.responseFormat;
  if (f?.type === "json_object") out.response_format = { type: "json_object" };
  else if (f?.type === "json_schema")
    out.response_format = {
      type: "json_schema",
      json_schema: { name: f.name, schema: f.schema, ...(f.strict != null && { strict: f.strict }) },
    };
  if (req.stream) {
    out.stream = true;
    // Metering reads the upstream's own usage, which a chat stream carries only when asked.
    if (d.streamUsage) out.stream_options = { include_usage: true };
  }
  return out;
}

/**
 * Consecutive turns of one role as one (a Responses history has one item per call): a chat assistant message
 * carries all its calls, which the tool messages must follow, and a thought signature stays beside its call.
 */
function merged(messages: IrMessage[]): IrMessage[] {
  const out: IrMessage[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last?.role === m.role) out[out.length - 1] = { role: m.role, parts: [...last.parts, ...m.parts] };
    else out.push(m);
  }
  return out;
}

/** An effort, or the nearest one to a thinking budget (Anthropic's budget_tokens). */
function effortOf(r: IrRequest["reasoning"]): string | undefined {
  if (!r) return undefined;
  if (r.effort) return r.effort;
  if (r.budgetTokens == null) return undefined;
  return r.budgetTokens < 4096 ? "low" : r.budgetTokens < 16384 ? "medium" : "high";
}

function userMessages(m: IrMessage, i: number, d: ChatDialect, out: ChatMessage[]): void {
  const content: Array<TextPart | ImagePart> = [];
  for (const p of m.parts) {
    if (p.type === "tool_result") {
      const parts = typeof p.content === "string" ? [{ type: "text" as const, text: p.content }] : p.content;
      const text = parts.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n\n");
      out.push({ role: "tool", tool_call_id: p.callId, content: p.isError ? `Error: ${text}` : text });
      for (const c of parts) if (c.type === "image") content.push(c);
    } else if (p.type === "text" || p.type === "image") content.push(p);
  }
  if (!content.length) return;
  if (content.every((p) => p.type === "text")) {
    out.push({ role: "user", content: content.map((p) => (p as TextPart).text).join("\n\n") });
    return;
  }
  if (!d.images) throw new TranslationError("this model does not take images", `messages[${i}].content`);
  out.push({
    role: "user",
    content: content.map((p) =>
      p.type === "text"
        ? { type: "text", text: p.text }
        : { type: "image_url", image_url: { url: imageUrl(p), ...(p.detail && { detail: p.detail }) } },
    ),
  });
}

const imageUrl = (p: ImagePart) =>
  p.source.kind === "url" ? p.source.url : `data:${p.source.mediaType};base64,${p.source.data}`;

function assistantMessage(m: IrMessage, origin: string, d: ChatDialect, out: ChatMessage[]): void {
  let text = "";
  let reasoning = "";
  let signature: string | undefined; // waiting for the call it belongs to
  const calls: ChatMessage[] = [];
  for (const p of m.parts) {
    if (p.type === "text") text += p.text;
    else if (p.type === "tool_call") {
      const call: ChatMessage = {
        id: p.id,
        type: "function",
        function: { name: p.name, arguments: p.arguments || "{}" },
      };
      const sig = signature ?? (d.thoughtSignatures && !calls.length ? SKIP_SIGNATURE : undefined);
      if (sig) call.extra_content = { google: { thought_signature: sig } };
      signature = undefined;
      calls.push(call);
    }
    // Another model's reasoning (or reasoning of unknown origin) is never forwarded.
    else if (p.type === "reasoning" && p.origin === origin && !p.redacted) {
      reasoning += p.text;
      if (p.opaque && d.thoughtSignatures) signature = p.opaque;
    }
  }
  if (!text && !calls.length) return;
  const msg: ChatMessage = { role: "assistant", content: text || null };
  if (calls.length) msg.tool_calls = calls;
  if (reasoning && d.reasoningField) msg[d.reasoningField] = reasoning;
  out.push(msg);
}

/** A chat.completion as an IR answer (choice 0). */
export function decodeAnswer(json: any, target: TranslateTarget): IrAnswer {
  // An error object sent with a 200 is not an empty answer: the seam answers 502 (translated.ts), charging nothing.
  if (!Array.isArray(json?.choices) && json?.error) throw new Error("the upstream answered an error object");
  const d = dialectOf(target);
  const choice = Array.isArray(json?.choices) ? json.choices[0] : undefined;
  const msg = choice?.message ?? {};
  const parts: IrAnswer["parts"] = [];
  const reasoning = reasoningOf(msg, d);
  if (reasoning) parts.push({ type: "reasoning", text: reasoning, origin: originOf(target) });
  if (typeof msg.content === "string" && msg.content) parts.push({ type: "text", text: msg.content });
  const refused = typeof msg.refusal === "string" && msg.refusal !== "";
  if (refused) parts.push({ type: "text", text: msg.refusal });
  const calls = Array.isArray(msg.tool_calls) ? msg.tool_calls : [];
  for (const c of calls) {
    const sig = thoughtSignatureOf(c);
    if (sig) parts.push({ type: "reasoning", text: "", origin: originOf(target), opaque: sig });
    const args = c?.function?.arguments;
    parts.push({
      type: "tool_call",
      id: typeof c?.id === "string" && c.id ? c.id : newCallId(),
      name: String(c?.function?.name ?? ""),
      arguments: typeof args === "string" ? args : args == null ? "" : JSON.stringify(args),
    });
  }
  return {
    id: typeof json?.id === "string" ? json.id : newCallId(),
    model: typeof json?.model === "string" ? json.model : "",
    parts,
    stop: refused ? "refusal" : stopReasonOf(choice?.finish_reason, calls.length > 0),
    usage: usageFromChat(json?.usage),
  };
}

/** Where an upstream puts reasoning text: the dialect's field, DeepSeek's reasoning_content, or `reasoning`. */
export function reasoningOf(o: any, d: ChatDialect): string {
  for (const k of [d.reasoningField, "reasoning_content", "reasoning"]) {
    const v = k ? o?.[k] : undefined;
    if (typeof v === "string" && v) return v;
  }
  return "";
}

/** An id for a call the upstream named none for (the next turn's tool result answers to it). */
export const newCallId = () => `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;

/** Gemini's placeholder for a call it did not make (its thought-signatures guide documents it). */
const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** The thought signature Gemini attaches to a tool call, if any. */
export function thoughtSignatureOf(call: any): string | undefined {
  const sig = call?.extra_content?.google?.thought_signature;
  return typeof sig === "string" && sig ? sig : undefined;
}
