// The chat client side: a Chat Completions request into the IR, and an IR answer back as a chat.completion. A chat
// client reaches this only for a model whose native protocol is Anthropic or Responses, so a field those cannot
// honour is refused here rather than dropped. What is refused, dropped or carried: docs/translation.md, "Chat: a
// chat client's request".

import {
  TranslationError,
  type IrAnswer,
  type IrMessage,
  type IrRequest,
  type IrTool,
  type IrToolChoice,
  type Part,
  type TextPart,
} from "../ir";
import { FINISH_REASON, chatUsage, reasoningDetail, reasoningFromDetail } from "./shared";
import { imagePart, isObject, refuseUnsupported, textOf } from "./client-fields";

export function decodeRequest(body: Record<string, any>): IrRequest {
  if (!isObject(body)) throw new TranslationError("the request body must be a JSON object");
  refuseUnsupported(body);
  if (!Array.isArray(body.messages)) throw new TranslationError("messages must be an array of messages", "messages");
  const { system, messages } = decodeMessages(body.messages);
  if (!messages.length)
    throw new TranslationError("messages must hold at least one non-empty user or assistant message", "messages");
  const ir: IrRequest = {
    model: typeof body.model === "string" ? body.model : "",
    system,
    messages,
    tools: tools(body.tools),
    stream: body.stream === true,
  };
  const choice = toolChoice(body.tool_choice);
  if (choice) ir.toolChoice = choice;
  if (typeof body.parallel_tool_calls === "boolean") ir.parallelToolCalls = body.parallel_tool_calls;
  decodeSampling(body, ir);
  const effort = reasoningEffort(body.reasoning_effort);
  if (effort) ir.reasoning = { effort };
  const format = responseFormat(body.response_format);
  if (format) ir.responseFormat = format;
  if (typeof body.user === "string") ir.user = body.user;
  return ir;
}

/** The system prompt (every system and developer message, in order) and the user and assistant turns. */
function decodeMessages(list: unknown[]): { system: TextPart[]; messages: IrMessage[] } {
  const system: TextPart[] = [];
  const messages: IrMessage[] = [];
  const push = (role: IrMessage["role"], parts: Part[]) => {
    if (!parts.length) return;
    const last = messages[messages.length - 1];
    // Consecutive turns of one role become one (tool results then a user message, say): Anthropic needs alternation.
    if (last?.role === role) last.parts.push(...parts);
    else messages.push({ role, parts });
  };
  list.forEach((m: unknown, i: number) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) throw new TranslationError(`${at} must be an object`, at);
    switch (m.role) {
      case "system":
      case "developer": {
        const text = textOf(m.content, `${at}.content`);
        if (text) system.push({ type: "text", text });
        return;
      }
      case "user":
        return push("user", userParts(m.content, `${at}.content`));
      case "assistant":
        return push("assistant", assistantParts(m, at));
      case "tool": {
        if (typeof m.tool_call_id !== "string")
          throw new TranslationError(`${at}.tool_call_id must be a string`, `${at}.tool_call_id`);
        return push("user", [
          { type: "tool_result", callId: m.tool_call_id, content: textOf(m.content, `${at}.content`) },
        ]);
      }
      case "function":
        throw new TranslationError(
          "function messages (the legacy function calling) are not supported for this model; use tools and tool messages",
          `${at}.role`,
        );
      default:
        throw new TranslationError(`${at}.role must be system, developer, user, assistant or tool`, `${at}.role`);
    }
  });
  return { system, messages };
}

/** The output limit, temperature, top_p and stop sequences, checked and set on `ir`. */
function decodeSampling(body: Record<string, any>, ir: IrRequest): void {
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (max != null) {
    if (!Number.isSafeInteger(max) || max < 1)
      throw new TranslationError(
        "max_completion_tokens must be a positive integer",
        body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens",
      );
    ir.maxOutputTokens = max;
  }
  for (const [field, key] of [
    ["temperature", "temperature"],
    ["top_p", "topP"],
  ] as const) {
    if (body[field] == null) continue;
    if (typeof body[field] !== "number") throw new TranslationError(`${field} must be a number`, field);
    ir[key] = body[field];
  }
  if (body.stop != null) {
    const stop = typeof body.stop === "string" ? [body.stop] : body.stop;
    if (!Array.isArray(stop) || !stop.every((s: unknown) => typeof s === "string"))
      throw new TranslationError("stop must be a string or an array of strings", "stop");
    if (stop.length) ir.stop = stop;
  }
}

function userParts(content: unknown, at: string): Part[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) throw new TranslationError(`${at} must be a string or an array of content parts`, at);
  return content.flatMap((p: any, j: number): Part[] => {
    const pat = `${at}[${j}]`;
    if (p?.type === "text") {
      if (typeof p.text !== "string") throw new TranslationError(`${pat}.text must be a string`, pat);
      return p.text ? [{ type: "text", text: p.text }] : [];
    }
    if (p?.type === "image_url") return [imagePart(p.image_url, pat)];
    throw new TranslationError(
      `${pat}: content parts of type ${JSON.stringify(p?.type)} are not supported for this model`,
      pat,
    );
  });
}

function assistantParts(m: Record<string, any>, at: string): Part[] {
  const parts: Part[] = [];
  if (Array.isArray(m.reasoning_details) && m.reasoning_details.length) {
    for (const d of m.reasoning_details) {
      const p = reasoningFromDetail(d);
      if (p) parts.push(p);
    }
  } else if (typeof m.reasoning_content === "string" && m.reasoning_content) {
    parts.push({ type: "reasoning", text: m.reasoning_content, origin: null });
  }
  if (m.content != null) {
    const text = textOf(m.content, `${at}.content`);
    if (text) parts.push({ type: "text", text });
  }
  if (m.tool_calls != null) {
    if (!Array.isArray(m.tool_calls))
      throw new TranslationError(`${at}.tool_calls must be an array`, `${at}.tool_calls`);
    m.tool_calls.forEach((c: any, k: number) => {
      const cat = `${at}.tool_calls[${k}]`;
      if (typeof c?.id !== "string" || typeof c.function?.name !== "string")
        throw new TranslationError(`${cat} needs an id and function.name`, cat);
      const args = c.function.arguments;
      parts.push({
        type: "tool_call",
        id: c.id,
        name: c.function.name,
        arguments: typeof args === "string" ? args : args == null ? "" : JSON.stringify(args),
      });
    });
  }
  return parts;
}

function tools(list: unknown): IrTool[] {
  if (list == null) return [];
  if (!Array.isArray(list)) throw new TranslationError("tools must be an array", "tools");
  return list.map((t: any, i: number) => {
    const at = `tools[${i}]`;
    if (t?.type !== "function")
      throw new TranslationError(`${at}: only function tools are supported for this model`, at);
    const f = t.function;
    if (typeof f?.name !== "string" || !f.name)
      throw new TranslationError(`${at}.function.name must be a non-empty string`, `${at}.function.name`);
    if (f.parameters != null && !isObject(f.parameters))
      throw new TranslationError(`${at}.function.parameters must be a JSON schema object`, `${at}.function.parameters`);
    const tool: IrTool = { name: f.name, parameters: f.parameters ?? { type: "object", properties: {} } };
    if (typeof f.description === "string") tool.description = f.description;
    if (typeof f.strict === "boolean") tool.strict = f.strict;
    return tool;
  });
}

function toolChoice(c: unknown): IrToolChoice | undefined {
  if (c == null) return undefined;
  if (c === "auto" || c === "none" || c === "required") return { type: c };
  if (isObject(c) && c.type === "function" && typeof c.function?.name === "string")
    return { type: "tool", name: c.function.name };
  throw new TranslationError(
    'tool_choice must be "auto", "none", "required" or {"type":"function","function":{"name":...}}',
    "tool_choice",
  );
}

const EFFORTS: Record<string, NonNullable<IrRequest["reasoning"]>["effort"] | null> = {
  none: null,
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
};

function reasoningEffort(v: unknown): NonNullable<IrRequest["reasoning"]>["effort"] | undefined {
  if (v == null) return undefined;
  if (typeof v !== "string" || !(v in EFFORTS))
    throw new TranslationError(
      "reasoning_effort must be none, minimal, low, medium, high or xhigh",
      "reasoning_effort",
    );
  return EFFORTS[v] ?? undefined;
}

function responseFormat(f: unknown): IrRequest["responseFormat"] {
  if (f == null) return undefined;
  if (!isObject(f)) throw new TranslationError("response_format must be an object", "response_format");
  if (f.type === "text") return undefined;
  if (f.type === "json_object") return { type: "json_object" };
  const s = f.json_schema;
  if (f.type === "json_schema" && isObject(s) && typeof s.name === "string") {
    return {
      type: "json_schema",
      name: s.name,
      schema: isObject(s.schema) ? s.schema : {},
      ...(typeof s.strict === "boolean" && { strict: s.strict }),
    };
  }
  throw new TranslationError(
    'response_format must be {"type":"text"}, {"type":"json_object"} or {"type":"json_schema","json_schema":{"name",...}}',
    "response_format",
  );
}

/** An IR answer as a chat.completion (only choice 0: n > 1 is refused). */
export function encodeAnswer(answer: IrAnswer, _request: Record<string, any>): Record<string, unknown> {
  let content: string | null = null;
  let reasoning = "";
  const details: Record<string, unknown>[] = [];
  const calls: object[] = [];
  for (const p of answer.parts) {
    if (p.type === "text") content = (content ?? "") + p.text;
    else if (p.type === "tool_call")
      calls.push({ id: p.id, type: "function", function: { name: p.name, arguments: p.arguments || "{}" } });
    else {
      if (!p.redacted) reasoning += p.text;
      details.push(reasoningDetail(p, details.length));
    }
  }
  const message: Record<string, unknown> = { role: "assistant", content, refusal: null };
  if (reasoning) message.reasoning_content = reasoning;
  if (details.length) message.reasoning_details = details;
  if (calls.length) message.tool_calls = calls;
  const out: Record<string, unknown> = {
    id: chatId(answer.id),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH_REASON[answer.stop] ?? "stop" }],
  };
  if (answer.usage) out.usage = chatUsage(answer.usage);
  return out;
}

export function chatId(id: string): string {
  return id.startsWith("chatcmpl-") ? id : `chatcmpl-${id}`;
}
