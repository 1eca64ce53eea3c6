// The Responses-side objects the chat→responses translation builds: the response envelope, output items and the
// usage mapping. Shared by the one-shot and the streaming translation so both produce the same shapes.

export interface TranslateContext {
  /** the response id reported to the client (resp_...) */
  id: string;
  /** unix seconds */
  createdAt: number;
  /** the model name the client asked for (reported back; the upstream may call it differently) */
  model: string;
  /** the client's Responses request: echoed into the response (instructions, tools, limits...) */
  request: Record<string, any>;
}

export function createTranslateContext(request: Record<string, any>, overrides: Partial<TranslateContext> = {}): TranslateContext {
  return {
    id: overrides.id ?? `resp_${crypto.randomUUID().replaceAll("-", "")}`,
    createdAt: overrides.createdAt ?? Math.floor(Date.now() / 1000),
    model: overrides.model ?? (typeof request.model === "string" ? request.model : "unknown"),
    request,
  };
}

/** Output item ids derived from the response id, so one response's items are recognisably its own. */
export function itemId(ctx: TranslateContext, prefix: "msg" | "rs" | "fc", n: number): string {
  return `${prefix}_${ctx.id.replace(/^resp_/, "")}${n.toString().padStart(3, "0")}`;
}

export type Status = "in_progress" | "completed" | "incomplete" | "failed";

/** The Response object, with the fields the official API always sends. store is false: nothing is stored. */
export function responseObject(
  ctx: TranslateContext,
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
    reasoning: { effort: r.reasoning?.effort ?? null, summary: null },
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

/** How the chat answer ended → the Responses status (length is `incomplete`, as Responses reports it). */
export function statusFor(finishReason: string | null | undefined): { status: Status; incomplete_details: object | null } {
  if (finishReason === "length") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (finishReason === "content_filter") return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

/**
 * Chat usage → Responses usage. Totals are kept as the upstream stated them, so metering this usage with the
 * Responses rule gives exactly what the chat rule gives on the original.
 */
export function chatUsageToResponses(u: any): Record<string, unknown> | null {
  if (!u || typeof u !== "object") return null;
  const input = num(u.prompt_tokens);
  const output = num(u.completion_tokens);
  return {
    input_tokens: input,
    // DeepSeek states cache hits as prompt_cache_hit_tokens; OpenAI-style upstreams in prompt_tokens_details.
    input_tokens_details: { cached_tokens: num(u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: num(u.completion_tokens_details?.reasoning_tokens) },
    total_tokens: typeof u.total_tokens === "number" ? u.total_tokens : input + output,
  };
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

export const outputText = (text: string) => ({ type: "output_text", annotations: [], logprobs: [], text });

export function messageItem(id: string, text: string, status: Status) {
  return { id, type: "message", status, content: [outputText(text)], role: "assistant" };
}

export function reasoningItem(id: string, text: string) {
  return { id, type: "reasoning", summary: [], content: [{ type: "reasoning_text", text }] };
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status: Status) {
  return { id, type: "function_call", status, arguments: args, call_id: callId, name };
}
