// A Messages request (a Claude Code or Anthropic SDK client) as an IrRequest, for a model that is not Claude.
// Every field Anthropic defines is carried, dropped because dropping it does not change the answer, or refused
// with a TranslationError naming it. Unknown fields are dropped: Claude Code adds new ones often.

import { createHash } from "node:crypto";
import {
  TranslationError,
  type ImagePart,
  type IrMessage,
  type IrRequest,
  type IrTool,
  type IrToolChoice,
  type Part,
  type TextPart,
} from "../ir";
import { argumentsText, cacheFromAnthropic, reasoningFromSignature } from "./shared";

/** Dropped: they steer Anthropic's own infrastructure (caching, context editing, region, speed), not the answer. */
// cache_control (top level), context_management, diagnostics, inference_geo, speed, service_tier, user_profile_id,
// workspace_id, top_k (no other protocol has it), metadata other than user_id.

/** Refused: they ask for something only Anthropic's servers do. */
const REFUSED_FIELDS: Record<string, string> = {
  container: "containers (code execution, skills) are only available on Claude models",
  mcp_servers: "the MCP connector is only available on Claude models",
};

const obj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

export function decodeRequest(body: Record<string, any>): IrRequest {
  if (!obj(body)) throw new TranslationError("the request body must be a JSON object");
  for (const [field, why] of Object.entries(REFUSED_FIELDS)) {
    if (body[field] != null) throw new TranslationError(`${field} is not supported for this model: ${why}`, field);
  }
  if (!Array.isArray(body.messages)) throw new TranslationError("messages must be an array", "messages");
  const system = systemParts(body.system);
  const messages: IrMessage[] = [];
  body.messages.forEach((m: unknown, i: number) => {
    // A mid-conversation system message (Claude Code sends them): no other protocol keeps a system turn in place,
    // so it joins the system prompt, in order, as chat's late system messages do.
    if (obj(m) && m.role === "system") system.push(...systemParts(m.content, `messages[${i}].content`));
    else messages.push(message(m, `messages[${i}]`));
  });
  // A last assistant message is a prefill: Claude continues its text. Another model would answer a new turn, which
  // the client appends to the prefill (a `{"colour":` prefill, then a whole JSON object): refused, not dropped.
  if (messages.at(-1)?.role === "assistant")
    throw new TranslationError(
      "the conversation ends with an assistant message (a prefill for Claude to continue), which this model cannot continue; end with a user message",
      `messages[${body.messages.length - 1}]`,
    );
  const req: IrRequest = {
    model: typeof body.model === "string" ? body.model : "",
    system,
    messages,
    tools: tools(body.tools),
    stream: body.stream === true,
  };
  if (body.tool_choice != null) Object.assign(req, toolChoice(body.tool_choice));
  if (body.max_tokens != null) req.maxOutputTokens = positive(body.max_tokens, "max_tokens");
  if (body.temperature != null) req.temperature = num(body.temperature, "temperature");
  if (body.top_p != null) req.topP = num(body.top_p, "top_p");
  if (body.stop_sequences != null) req.stop = strings(body.stop_sequences, "stop_sequences");
  if (obj(body.metadata) && typeof body.metadata.user_id === "string" && body.metadata.user_id)
    req.user = endUser(body.metadata.user_id);
  const reasoning = reasoningAsked(body.thinking, body.output_config);
  if (reasoning) req.reasoning = reasoning;
  const format = body.output_config?.format;
  if (format != null) {
    if (!obj(format) || format.type !== "json_schema" || !obj(format.schema)) {
      throw new TranslationError('output_config.format must be {type: "json_schema", schema}', "output_config.format");
    }
    req.responseFormat = { type: "json_schema", name: "output", schema: format.schema, strict: true };
  }
  return req;
}

// Claude Code's user_id runs to ~150 characters; OpenAI refuses a `user` over 64. A digest keeps one id per user.
const MAX_USER = 64;

function endUser(id: string): string {
  return id.length <= MAX_USER ? id : createHash("sha256").update(id).digest("hex");
}

function positive(v: unknown, param: string): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1)
    throw new TranslationError(`${param} must be a positive integer`, param);
  return v;
}

function num(v: unknown, param: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new TranslationError(`${param} must be a number`, param);
  return v;
}

function strings(v: unknown, param: string): string[] {
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string"))
    throw new TranslationError(`${param} must be an array of strings`, param);
  return v;
}

function systemParts(system: unknown, at = "system"): TextPart[] {
  if (system == null) return [];
  if (typeof system === "string") return system ? [{ type: "text", text: system }] : [];
  if (!Array.isArray(system)) throw new TranslationError(`${at} must be a string or an array of text blocks`, at);
  return system.map((b, i) => {
    if (!obj(b) || b.type !== "text" || typeof b.text !== "string")
      throw new TranslationError(`${at} blocks must be text blocks`, `${at}[${i}]`);
    return text(b);
  });
}

function text(b: Record<string, any>): TextPart {
  const cache = cacheFromAnthropic(b.cache_control);
  return cache ? { type: "text", text: b.text, cache } : { type: "text", text: b.text };
}

function message(m: unknown, at: string): IrMessage {
  if (!obj(m) || (m.role !== "user" && m.role !== "assistant"))
    throw new TranslationError(`${at}.role must be "user", "assistant" or "system"`, `${at}.role`);
  if (typeof m.content === "string") return { role: m.role, parts: [{ type: "text", text: m.content }] };
  if (!Array.isArray(m.content))
    throw new TranslationError(`${at}.content must be a string or an array of blocks`, `${at}.content`);
  return { role: m.role, parts: m.content.map((b: unknown, j: number) => block(b, `${at}.content[${j}]`)) };
}

// Server-side blocks (server_tool_use, web_search_tool_result, ...) and documents have no equivalent elsewhere.
function block(b: unknown, at: string): Part {
  if (!obj(b) || typeof b.type !== "string")
    throw new TranslationError(`${at} must be a content block with a type`, at);
  switch (b.type) {
    case "text":
      if (typeof b.text !== "string") throw new TranslationError(`${at}.text must be a string`, `${at}.text`);
      return text(b);
    case "image":
      return image(b, at);
    case "thinking":
      if (typeof b.thinking !== "string")
        throw new TranslationError(`${at}.thinking must be a string`, `${at}.thinking`);
      return { type: "reasoning", text: b.thinking, ...reasoningFromSignature(b.signature) };
    case "redacted_thinking":
      if (typeof b.data !== "string") throw new TranslationError(`${at}.data must be a string`, `${at}.data`);
      return { type: "reasoning", text: "", redacted: true, ...reasoningFromSignature(b.data) };
    case "tool_use":
      if (typeof b.id !== "string" || !b.id)
        throw new TranslationError(`${at}.id must be a non-empty string`, `${at}.id`);
      if (typeof b.name !== "string" || !b.name)
        throw new TranslationError(`${at}.name must be a non-empty string`, `${at}.name`);
      return { type: "tool_call", id: b.id, name: b.name, arguments: argumentsText(b.input, `${at}.input`) };
    case "tool_result":
      return toolResult(b, at);
    case "document":
      return plainDocument(b, at);
    default:
      throw new TranslationError(
        `${at}: content blocks of type ${JSON.stringify(b.type).slice(0, 80)} are not supported for this model`,
        `${at}.type`,
      );
  }
}

function image(b: Record<string, any>, at: string): ImagePart {
  const s = b.source;
  const cache = cacheFromAnthropic(b.cache_control);
  const part = (source: ImagePart["source"]): ImagePart =>
    cache ? { type: "image", source, cache } : { type: "image", source };
  if (obj(s) && s.type === "base64" && typeof s.media_type === "string" && typeof s.data === "string") {
    return part({ kind: "base64", mediaType: s.media_type, data: s.data });
  }
  if (obj(s) && s.type === "url" && typeof s.url === "string") return part({ kind: "url", url: s.url });
  throw new TranslationError(
    `${at}.source must be a base64 or url image source (file ids are not supported for this model)`,
    `${at}.source`,
  );
}

// A plain-text document is its text; other documents (PDFs, files) have no equivalent elsewhere.
function plainDocument(b: Record<string, any>, at: string): TextPart {
  const s = b.source;
  if (obj(s) && s.type === "text" && typeof s.data === "string")
    return text({ text: s.data, cache_control: b.cache_control });
  throw new TranslationError(`${at}: only plain-text documents are supported for this model`, `${at}.source`);
}

function toolResult(b: Record<string, any>, at: string): Part {
  if (typeof b.tool_use_id !== "string" || !b.tool_use_id)
    throw new TranslationError(`${at}.tool_use_id must be a non-empty string`, `${at}.tool_use_id`);
  let content: string | Array<TextPart | ImagePart>;
  if (b.content == null) content = "";
  else if (typeof b.content === "string") content = b.content;
  else if (Array.isArray(b.content)) {
    content = b.content.map((c: unknown, k: number) => {
      const where = `${at}.content[${k}]`;
      if (obj(c) && c.type === "text" && typeof c.text === "string") return text(c);
      if (obj(c) && c.type === "image") return image(c, where);
      if (obj(c) && c.type === "document") return plainDocument(c, where);
      throw new TranslationError(`${where}: tool results may hold only text and images for this model`, where);
    });
  } else throw new TranslationError(`${at}.content must be a string or an array of blocks`, `${at}.content`);
  const cache = cacheFromAnthropic(b.cache_control);
  return {
    type: "tool_result",
    callId: b.tool_use_id,
    content,
    ...(b.is_error === true && { isError: true }),
    ...(cache && { cache }),
  };
}

function tools(v: unknown): IrTool[] {
  if (v == null) return [];
  if (!Array.isArray(v)) throw new TranslationError("tools must be an array", "tools");
  return v.map((t, i) => {
    const at = `tools[${i}]`;
    // Custom tools have no type or type "custom"; every other type is a tool Anthropic's servers run.
    if (!obj(t)) throw new TranslationError(`${at} must be an object`, at);
    if (t.type != null && t.type !== "custom") {
      throw new TranslationError(
        `${at}: the server tool ${JSON.stringify(t.type).slice(0, 80)} is only available on Claude models`,
        `${at}.type`,
      );
    }
    if (typeof t.name !== "string" || !t.name)
      throw new TranslationError(`${at}.name must be a non-empty string`, `${at}.name`);
    if (!obj(t.input_schema))
      throw new TranslationError(`${at}.input_schema must be a JSON schema object`, `${at}.input_schema`);
    const tool: IrTool = { name: t.name, parameters: t.input_schema };
    if (typeof t.description === "string") tool.description = t.description;
    if (t.strict === true) tool.strict = true;
    const cache = cacheFromAnthropic(t.cache_control);
    if (cache) tool.cache = cache;
    return tool;
  });
}

const CHOICES: Record<string, IrToolChoice["type"]> = { auto: "auto", any: "required", none: "none", tool: "tool" };

function toolChoice(c: unknown): Pick<IrRequest, "toolChoice" | "parallelToolCalls"> {
  const type = obj(c) ? CHOICES[c.type] : undefined;
  if (!obj(c) || !type)
    throw new TranslationError('tool_choice.type must be "auto", "any", "tool" or "none"', "tool_choice");
  if (type === "tool" && (typeof c.name !== "string" || !c.name))
    throw new TranslationError("tool_choice.name must name a tool", "tool_choice.name");
  const out: Pick<IrRequest, "toolChoice" | "parallelToolCalls"> = {
    toolChoice: type === "tool" ? { type, name: c.name } : ({ type } as IrToolChoice),
  };
  if (c.disable_parallel_tool_use === true) out.parallelToolCalls = false;
  return out;
}

// output_config.effort's top levels have no equivalent above "high" elsewhere.
const EFFORTS: Record<string, "low" | "medium" | "high"> = {
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

/**
 * `thinking` and `output_config.effort` as the IR's reasoning: enabled gives its budget; adaptive and
 * between_tools let the model decide, so they give the effort asked for (medium when none); disabled gives none.
 */
function reasoningAsked(thinking: unknown, config: unknown): IrRequest["reasoning"] {
  const effortRaw = obj(config) ? config.effort : undefined;
  if (effortRaw != null && !(typeof effortRaw === "string" && EFFORTS[effortRaw])) {
    throw new TranslationError("output_config.effort must be low, medium, high, xhigh or max", "output_config.effort");
  }
  const effort = effortRaw ? EFFORTS[effortRaw as string] : undefined;
  if (thinking == null) return effort ? { effort } : undefined;
  if (!obj(thinking)) throw new TranslationError("thinking must be an object", "thinking");
  switch (thinking.type) {
    case "disabled":
      return undefined;
    case "enabled":
      return { budgetTokens: positive(thinking.budget_tokens, "thinking.budget_tokens"), ...(effort && { effort }) };
    case "adaptive":
    case "between_tools":
      return { effort: effort ?? "medium" };
    default:
      throw new TranslationError('thinking.type must be "enabled", "adaptive" or "disabled"', "thinking.type");
  }
}
