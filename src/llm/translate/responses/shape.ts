// The Responses objects the client side writes (the response envelope, output items, usage) and the mappings both
// sides share (stop reason ⇄ status, usage ⇄ IrUsage). JSON answers and streams build them here, so both agree.

import { deeperThan, MAX_NESTING } from "../../protocols/common";
import { openOpaque, sealOpaque, TranslationError, type IrUsage, type StopReason } from "../ir";

export type Status = "in_progress" | "completed" | "incomplete" | "failed";

/** The request fields every answer repeats (responseObject); checked for depth before anything is sent upstream. */
export const ECHOED = [
  "instructions",
  "max_output_tokens",
  "parallel_tool_calls",
  "reasoning",
  "temperature",
  "text",
  "tool_choice",
  "tools",
  "top_p",
  "metadata",
] as const;

export function checkEchoedDepth(body: Record<string, any>): void {
  for (const field of ECHOED) {
    if (deeperThan(body[field], MAX_NESTING))
      throw new TranslationError(`${field} is nested more than ${MAX_NESTING} levels deep`, field);
  }
}

/** A request field that cannot be carried: the client's 400, naming it (the request decoders' one way to refuse). */
export const refuse = (message: string, param: string): never => {
  throw new TranslationError(message, param);
};

export function requiredString(v: unknown, param: string): string {
  if (typeof v !== "string" || !v) refuse(`${param} must be a non-empty string`, param);
  return v as string;
}

export interface AnswerContext {
  /** resp_… as the client is told it */
  id: string;
  createdAt: number;
  /** the model the client asked for (the upstream may name it differently) */
  model: string;
  request: Record<string, any>;
  /** names of the request's `custom` tools: their calls are written as custom_tool_call items */
  customTools: Set<string>;
  /** a namespace member's name as the model knows it → its namespace and its own name */
  namespaced: Map<string, { namespace: string; name: string }>;
}

/**
 * A `namespace` tool (Codex groups its sub-agent tools, and MCP servers' tools, in them) reaches a translated model
 * as its member tools, each a function named namespace + "__" + name (MCP's own naming); a call to one goes back
 * to the client under its namespace, and a call in the history comes in under the joined name.
 */
export const NAMESPACE_JOIN = "__";

export function answerContext(request: Record<string, any>, upstreamId: string, upstreamModel: string): AnswerContext {
  const customTools = new Set<string>();
  const namespaced = new Map<string, { namespace: string; name: string }>();
  for (const t of Array.isArray(request.tools) ? request.tools : []) {
    if (t?.type === "custom" && typeof t.name === "string") customTools.add(t.name);
    if (t?.type !== "namespace" || typeof t.name !== "string" || !Array.isArray(t.tools)) continue;
    for (const member of t.tools) {
      if (typeof member?.name !== "string") continue;
      const joined = t.name + NAMESPACE_JOIN + member.name;
      namespaced.set(joined, { namespace: t.name, name: member.name });
      if (member.type === "custom") customTools.add(joined);
    }
  }
  return {
    id: upstreamId.startsWith("resp_")
      ? upstreamId
      : `resp_${upstreamId.replace(/[^A-Za-z0-9_-]/g, "") || crypto.randomUUID().replaceAll("-", "")}`,
    createdAt: Math.floor(Date.now() / 1000),
    model: typeof request.model === "string" ? request.model : upstreamModel,
    request,
    customTools,
    namespaced,
  };
}

/** Output item ids derived from the response id, so one response's items are recognisably its own. */
export function itemId(ctx: AnswerContext, prefix: "msg" | "rs" | "fc" | "ctc", n: number): string {
  return `${prefix}_${ctx.id.replace(/^resp_/, "")}${n.toString().padStart(3, "0")}`;
}

/** The Response object with the fields the official API always sends. store is false: nothing is stored. */
export function responseObject(
  ctx: AnswerContext,
  status: Status,
  output: object[],
  usage: object | null,
  extra: { error?: object | null; incomplete_details?: object | null } = {},
): Record<string, unknown> {
  const r = ctx.request;
  return {
    id: ctx.id,
    object: "response",
    created_at: ctx.createdAt,
    status,
    background: false,
    completed_at: status === "completed" ? Math.floor(Date.now() / 1000) : null,
    error: extra.error ?? null,
    incomplete_details: extra.incomplete_details ?? null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    max_tool_calls: null,
    model: ctx.model,
    output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: r.reasoning?.effort ?? null, summary: r.reasoning?.summary ?? null },
    safety_identifier: null,
    service_tier: "default",
    store: false,
    temperature: r.temperature ?? 1,
    text: r.text ?? { format: { type: "text" } },
    tool_choice: r.tool_choice ?? "auto",
    tools: Array.isArray(r.tools) ? r.tools : [],
    top_logprobs: 0,
    top_p: r.top_p ?? 1,
    truncation: "disabled",
    usage,
    user: null,
    metadata: r.metadata ?? {},
  };
}

/** How an answer ended → the Responses status. */
export function statusFor(stop: StopReason): { status: Status; incomplete_details: object | null } {
  if (stop === "max_tokens") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (stop === "refusal") return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

/** IrUsage → Responses usage: input_tokens counts cached tokens too, output_tokens counts reasoning. */
export function usageOut(u: IrUsage | null | undefined): Record<string, unknown> | null {
  if (!u) return null;
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.input + u.output,
  };
}

export const outputText = (text: string) => ({ type: "output_text", annotations: [], logprobs: [], text });

export function messageItem(id: string, text: string, status: Status) {
  return { id, type: "message", status, content: [outputText(text)], role: "assistant" };
}

/** The tool a call names, as the client knows it: a namespace member by its own name, with its namespace. */
export interface ToolRef {
  name: string;
  namespace?: string;
}

export function toolRef(ctx: AnswerContext, name: string): ToolRef {
  return ctx.namespaced.get(name) ?? { name };
}

/** The arguments of a call that has none (a tool without parameters): Codex parses them as JSON, and "" is not. */
export const NO_ARGUMENTS = "{}";

export function functionCallItem(id: string, callId: string, tool: ToolRef, args: string, status: Status) {
  return {
    id,
    type: "function_call",
    status,
    arguments: args,
    call_id: callId,
    name: tool.name,
    ...(tool.namespace !== undefined && { namespace: tool.namespace }),
  };
}

export function customToolCallItem(id: string, callId: string, tool: ToolRef, input: string, status: Status) {
  return {
    id,
    type: "custom_tool_call",
    status,
    call_id: callId,
    name: tool.name,
    ...(tool.namespace !== undefined && { namespace: tool.namespace }),
    input,
  };
}

/**
 * A redacted reasoning block (Anthropic redacted_thinking) has no text, only its opaque value, and must come back
 * as redacted: the mark travels inside the sealed value, which only this codec writes and reads.
 */
const REDACTED = "redacted:";

/**
 * The encrypted_content a reasoning item carries: the opaque value sealed with its origin (none without an origin).
 * Reasoning with no opaque value is sealed empty, so its origin survives: DeepSeek wants its reasoning text back on
 * tool-call turns, and only a known origin lets the next turn send it there.
 */
export function sealedReasoning(
  origin: string | null,
  opaque: string | undefined,
  redacted: boolean | undefined,
): string | undefined {
  if (!origin) return undefined;
  return sealOpaque(origin, redacted ? REDACTED + (opaque ?? "") : (opaque ?? ""));
}

/**
 * A client's encrypted_content back: its origin and value when we sealed it. An unsealed value came from an
 * OpenAI-style server we cannot name (the client may have talked to OpenAI or xAI directly): origin null, so no
 * upstream is ever sent it.
 */
export function openReasoning(encrypted: string): { origin: string | null; opaque: string; redacted: boolean } {
  const o = openOpaque(encrypted);
  if (!o) return { origin: null, opaque: encrypted, redacted: false };
  if (o.value.startsWith(REDACTED)) return { origin: o.origin, opaque: o.value.slice(REDACTED.length), redacted: true };
  return { origin: o.origin, opaque: o.value, redacted: false };
}

export function reasoningItem(id: string, text: string, encrypted: string | undefined) {
  return {
    id,
    type: "reasoning",
    summary: text ? [{ type: "summary_text", text }] : [],
    ...(encrypted !== undefined && { encrypted_content: encrypted }),
  };
}

/** A custom (freeform) tool call travels as a function call with one string argument under this name. */
export const CUSTOM_INPUT = "input";

/** The freeform input of a custom tool call from the function arguments the model wrote (as written when unreadable). */
export function customInput(args: string): string {
  try {
    const v = JSON.parse(args);
    if (typeof v?.[CUSTOM_INPUT] === "string") return v[CUSTOM_INPUT];
  } catch {
    // arguments the model left as invalid JSON: handed over as they are
  }
  return args;
}
