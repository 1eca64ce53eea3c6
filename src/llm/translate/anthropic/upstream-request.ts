// An IrRequest written as a Messages body for a Claude model (an OpenAI-protocol client calling Claude). Anthropic
// is strict where OpenAI is lenient (max_tokens required, thinking budgets, temperature's range, role order), so
// each request is made into one it accepts rather than one it refuses; the choices, one by one:
// docs/translation.md, "Anthropic: request to a Claude model".

import {
  originOf,
  TranslationError,
  type ImagePart,
  type IrMessage,
  type IrRequest,
  type IrTool,
  type Part,
  type TextPart,
  type TranslateTarget,
} from "../ir";
import { cacheToAnthropic, inputObject, toAnthropicToolId } from "./shared";

type Block = Record<string, unknown> & { type: string };

const EFFORT_BUDGET = { minimal: 1024, low: 2048, medium: 8192, high: 24576 } as const;
const MIN_BUDGET = 1024;

export function encodeRequest(req: IrRequest, target: TranslateTarget): Record<string, unknown> {
  const d = target.dialect;
  const messages = turns(req.messages, originOf(target));
  if (!messages.length) throw new TranslationError("the conversation has no content to send", "messages");
  const body: Record<string, unknown> = {
    model: req.model,
    max_tokens: req.maxOutputTokens ?? (typeof d.defaultMaxTokens === "number" ? d.defaultMaxTokens : 4096),
    messages,
  };
  const system = req.system.filter((p) => p.text !== "").map(textBlock);
  if (system.length) body.system = system;
  if (req.stream) body.stream = true;
  if (req.stop?.length) {
    const stops = req.stop.filter((s) => s.trim() !== "");
    if (stops.length) body.stop_sequences = stops;
  }
  if (req.user) body.metadata = { user_id: req.user };

  const structured = d.structuredOutputs !== false;
  if (req.tools.length) {
    body.tools = req.tools.map((t) => tool(t, structured));
    const choice = toolChoice(req);
    if (choice) body.tool_choice = choice;
  }
  if (req.responseFormat) {
    if (!structured)
      throw new TranslationError(
        "structured output (response_format) is not supported for this model",
        "response_format",
      );
    const schema = req.responseFormat.type === "json_schema" ? req.responseFormat.schema : { type: "object" };
    body.output_config = { format: { type: "json_schema", schema } };
  }

  const thinking = d.reasoning === false ? undefined : thinkingFor(req, body.max_tokens as number, messages);
  if (thinking) body.thinking = thinking;
  else if (d.sampling !== false) {
    if (req.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, req.temperature));
    else if (req.topP !== undefined) body.top_p = req.topP;
  }
  dropExtraCacheHints(body);
  return body;
}

// Anthropic takes at most 4 cache breakpoints (tools, then system, then messages, in that order). A client
// protocol without that limit may carry more: the earliest go, since a later breakpoint also caches what precedes it.
const MAX_CACHE_HINTS = 4;

function dropExtraCacheHints(body: Record<string, any>): void {
  const marked: Array<Record<string, unknown>> = [];
  const visit = (b: any) => {
    if (b?.cache_control) marked.push(b);
    if (Array.isArray(b?.content)) b.content.forEach(visit);
  };
  body.tools?.forEach(visit);
  body.system?.forEach(visit);
  for (const m of body.messages) m.content.forEach(visit);
  for (const b of marked.slice(0, Math.max(0, marked.length - MAX_CACHE_HINTS))) delete b.cache_control;
}

function thinkingFor(
  req: IrRequest,
  maxTokens: number,
  messages: Array<{ role: string; content: Block[] }>,
): Record<string, unknown> | undefined {
  const r = req.reasoning;
  if (!r || (r.budgetTokens === undefined && r.effort === undefined)) return undefined;
  const forced = req.toolChoice?.type === "required" || req.toolChoice?.type === "tool";
  if (forced || answersUnthoughtToolCalls(messages)) return undefined;
  const budget = Math.min(r.budgetTokens ?? EFFORT_BUDGET[r.effort!], maxTokens - 1);
  return budget >= MIN_BUDGET ? { type: "enabled", budget_tokens: budget } : undefined;
}

// With thinking on, Anthropic wants the assistant message whose tool calls the last user message answers to open
// with its thinking block.
function answersUnthoughtToolCalls(messages: Array<{ role: string; content: Block[] }>): boolean {
  const last = messages.at(-1);
  const prev = messages.at(-2);
  if (!last || !prev || last.role !== "user" || !last.content.some((b) => b.type === "tool_result")) return false;
  const first = prev.content[0]?.type;
  return first !== "thinking" && first !== "redacted_thinking";
}

function textBlock(p: TextPart): Block {
  return { type: "text", text: p.text, ...cacheToAnthropic(p.cache) };
}

// Chat clients send images as data: URLs; Anthropic's url source takes only http(s).
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function imageBlock(p: ImagePart): Block {
  const s = p.source;
  const data = s.kind === "url" ? DATA_URL.exec(s.url) : null;
  const source =
    s.kind === "base64"
      ? { type: "base64", media_type: s.mediaType, data: s.data }
      : data
        ? { type: "base64", media_type: data[1], data: data[2] }
        : { type: "url", url: s.url };
  return { type: "image", source, ...cacheToAnthropic(p.cache) };
}

function block(p: Part, origin: string): Block | null {
  switch (p.type) {
    case "text":
      return p.text === "" ? null : textBlock(p);
    case "image":
      return imageBlock(p);
    case "reasoning":
      if (p.origin !== origin || !p.opaque) return null;
      return p.redacted
        ? { type: "redacted_thinking", data: p.opaque }
        : { type: "thinking", thinking: p.text, signature: p.opaque };
    case "tool_call":
      return { type: "tool_use", id: toAnthropicToolId(p.id), name: p.name, input: inputObject(p.arguments) };
    case "tool_result": {
      const content =
        typeof p.content === "string"
          ? p.content
          : p.content.flatMap((c) => (c.type === "text" ? (c.text ? [textBlock(c)] : []) : [imageBlock(c)]));
      return {
        type: "tool_result",
        tool_use_id: toAnthropicToolId(p.callId),
        ...(content.length && { content }),
        ...(p.isError && { is_error: true }),
        ...cacheToAnthropic(p.cache),
      };
    }
  }
}

/** IR messages as alternating Anthropic turns: blocks converted, empty messages gone, same-role neighbours merged. */
function turns(messages: IrMessage[], origin: string): Array<{ role: string; content: Block[] }> {
  const out: Array<{ role: string; content: Block[] }> = [];
  for (const m of messages) {
    const content = m.parts.map((p) => block(p, origin)).filter((b): b is Block => b !== null);
    if (!content.length) continue;
    const last = out.at(-1);
    if (last && last.role === m.role) last.content.push(...content);
    else out.push({ role: m.role, content });
  }
  for (const m of out) {
    if (m.role === "user")
      m.content = [
        ...m.content.filter((b) => b.type === "tool_result"),
        ...m.content.filter((b) => b.type !== "tool_result"),
      ];
  }
  return out;
}

function tool(t: IrTool, structured: boolean): Record<string, unknown> {
  return {
    name: t.name,
    ...(t.description !== undefined && { description: t.description }),
    input_schema: t.parameters.type === undefined ? { type: "object", ...t.parameters } : t.parameters,
    ...(structured && t.strict && { strict: true }),
    ...cacheToAnthropic(t.cache),
  };
}

function toolChoice(req: IrRequest): Record<string, unknown> | undefined {
  const c = req.toolChoice;
  const serial = req.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (!c) return req.parallelToolCalls === false ? { type: "auto", ...serial } : undefined;
  if (c.type === "none") return { type: "none" };
  if (c.type === "tool") return { type: "tool", name: c.name, ...serial };
  return { type: c.type === "required" ? "any" : "auto", ...serial };
}
