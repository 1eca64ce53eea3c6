// A Responses request (Codex CLI, the openai SDK's `responses`) → IrRequest, for a model whose native protocol is
// another one. Every field is carried, dropped as harmless, or refused with a TranslationError naming it: what the
// answer would not honour is refused, what a translated model cannot run (hosted tools) is left out and named.
// The field-by-field choices: docs/translation.md, "Responses: a Responses client's request".

import type { ImagePart, IrMessage, IrRequest, Part, TextPart } from "../ir";
import { decodeTools } from "./client-tools";
import { checkEchoedDepth, CUSTOM_INPUT, NAMESPACE_JOIN, openReasoning, refuse, requiredString } from "./shape";

export function decodeRequest(body: Record<string, any>): IrRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    refuse("the request body must be a JSON object", "body");
  checkEchoedDepth(body);
  refuseStateful(body);

  const system: TextPart[] = [];
  if (typeof body.instructions === "string") {
    if (body.instructions) system.push({ type: "text", text: body.instructions });
  } else if (body.instructions != null) refuse("instructions must be a string", "instructions");

  const messages: IrMessage[] = [];
  if (typeof body.input === "string") messages.push({ role: "user", parts: [{ type: "text", text: body.input }] });
  else if (Array.isArray(body.input)) decodeItems(body.input, system, messages);
  else refuse("input must be a string or an array of items", "input");

  const { tools, toolChoice, droppedTools } = decodeTools(body.tools, body.tool_choice);
  const req: IrRequest = {
    model: typeof body.model === "string" ? body.model : "",
    system,
    messages,
    tools,
    stream: body.stream === true,
  };
  if (toolChoice) req.toolChoice = toolChoice;
  if (droppedTools.length) req.droppedTools = droppedTools;
  if (typeof body.parallel_tool_calls === "boolean") req.parallelToolCalls = body.parallel_tool_calls;
  if (body.max_output_tokens != null) {
    if (!Number.isSafeInteger(body.max_output_tokens) || body.max_output_tokens < 1)
      refuse("max_output_tokens must be a positive integer", "max_output_tokens");
    req.maxOutputTokens = body.max_output_tokens;
  }
  for (const [field, key] of [
    ["temperature", "temperature"],
    ["top_p", "topP"],
  ] as const) {
    if (body[field] == null) continue;
    if (typeof body[field] !== "number" || !Number.isFinite(body[field])) refuse(`${field} must be a number`, field);
    req[key] = body[field];
  }
  const effort = decodeEffort(body.reasoning);
  if (effort) req.reasoning = { effort };
  const format = decodeFormat(body.text);
  if (format) req.responseFormat = format;
  if (typeof body.user === "string" && body.user) req.user = body.user;
  return req;
}

function refuseStateful(body: Record<string, any>): void {
  if (body.previous_response_id != null)
    refuse(
      "previous_response_id is not supported for this model (nothing is stored); send the full conversation in input",
      "previous_response_id",
    );
  if (body.conversation != null)
    refuse(
      "conversation is not supported for this model (nothing is stored); send the full conversation in input",
      "conversation",
    );
  if (body.prompt != null) refuse("prompt (a stored prompt template) is not supported for this model", "prompt");
  if (body.background === true) refuse("background is not supported for this model", "background");
  if (typeof body.top_logprobs === "number" && body.top_logprobs > 0)
    refuse("top_logprobs is not supported for this model", "top_logprobs");
  if (Array.isArray(body.include) && body.include.includes("message.output_text.logprobs"))
    refuse("logprobs are not supported for this model", "include");
  if (body.service_tier === "priority") refuse("service_tier priority is not supported for this model", "service_tier");
}

function decodeItems(items: unknown[], system: TextPart[], messages: IrMessage[]): void {
  const push = (role: IrMessage["role"], part: Part) => {
    const last = messages[messages.length - 1];
    if (last?.role === role) last.parts.push(part);
    else messages.push({ role, parts: [part] });
  };
  items.forEach((raw, i) => {
    const at = `input[${i}]`;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) refuse(`${at} must be an object`, at);
    const item = raw as Record<string, any>;
    const type = item.type ?? (item.role ? "message" : undefined);
    switch (type) {
      case "message": {
        const role = item.role;
        if (role === "system" || role === "developer") {
          for (const p of contentParts(item.content, `${at}.content`))
            if (p.type === "text") system.push(p);
            else refuse(`${role} messages may hold only text`, `${at}.content`);
        } else if (role === "user" || role === "assistant") {
          for (const p of contentParts(item.content, `${at}.content`)) push(role, p);
        } else refuse(`${at}.role must be user, assistant, system or developer`, `${at}.role`);
        return;
      }
      case "function_call":
        return push("assistant", {
          type: "tool_call",
          id: callId(item, at),
          name: calledName(item, at),
          arguments: typeof item.arguments === "string" ? item.arguments : "",
        });
      case "custom_tool_call":
        return push("assistant", {
          type: "tool_call",
          id: callId(item, at),
          name: calledName(item, at),
          arguments: JSON.stringify({ [CUSTOM_INPUT]: typeof item.input === "string" ? item.input : "" }),
        });
      case "function_call_output":
      case "custom_tool_call_output": {
        // Some Codex versions send a failure as {content, success: false}: an error result.
        const failed = typeof item.output?.content === "string" && !Array.isArray(item.output);
        const content = toolOutput(failed ? item.output.content : item.output, `${at}.output`);
        return push("user", {
          type: "tool_result",
          callId: callId(item, at),
          content,
          ...(failed && item.output.success === false && { isError: true }),
        });
      }
      case "reasoning":
        return push("assistant", reasoningPart(item, at));
      case "item_reference":
        return refuse("item_reference is not supported for this model (nothing is stored)", at);
      default:
      // results of hosted tools the translated model never ran (web_search_call...) and client bookkeeping items
    }
  });
}

function callId(item: Record<string, any>, at: string): string {
  return requiredString(item.call_id, `${at}.call_id`);
}

/** The tool a history call names, as the model knows it (a namespace member under its joined name). */
function calledName(item: Record<string, any>, at: string): string {
  const name = requiredString(item.name, `${at}.name`);
  return typeof item.namespace === "string" && item.namespace ? item.namespace + NAMESPACE_JOIN + name : name;
}

function contentParts(content: unknown, at: string): Array<TextPart | ImagePart> {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return refuse(`${at} must be a string or an array of content parts`, at);
  const parts: Array<TextPart | ImagePart> = [];
  content.forEach((p: any, j) => {
    const here = `${at}[${j}]`;
    switch (p?.type) {
      case "input_text":
      case "output_text":
        if (typeof p.text !== "string") refuse(`${here}.text must be a string`, `${here}.text`);
        if (p.text) parts.push({ type: "text", text: p.text });
        return;
      case "refusal":
        if (typeof p.refusal === "string" && p.refusal) parts.push({ type: "text", text: p.refusal });
        return;
      case "input_image":
        parts.push(image(p, here));
        return;
      default:
        refuse(`content part ${JSON.stringify(p?.type ?? null)} is not supported for this model`, here);
    }
  });
  return parts;
}

function image(p: Record<string, any>, at: string): ImagePart {
  if (typeof p.image_url !== "string" || !p.image_url)
    return refuse("input_image needs an image_url (file_id is not supported for this model)", at);
  const detail = typeof p.detail === "string" && p.detail !== "auto" ? { detail: p.detail } : {};
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(p.image_url);
  if (data) return { type: "image", source: { kind: "base64", mediaType: data[1]!, data: data[2]! }, ...detail };
  return { type: "image", source: { kind: "url", url: p.image_url }, ...detail };
}

function toolOutput(output: unknown, at: string): string | Array<TextPart | ImagePart> {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return contentParts(output, at);
  return refuse(`${at} must be a string or an array of content parts`, at);
}

function reasoningPart(item: Record<string, any>, at: string): Part {
  const texts = (v: unknown) =>
    Array.isArray(v) ? v.map((p: any) => (typeof p?.text === "string" ? p.text : "")).filter(Boolean) : [];
  const content = texts(item.content);
  const text = (content.length ? content : texts(item.summary)).join("\n\n");
  if (item.encrypted_content != null && typeof item.encrypted_content !== "string")
    refuse(`${at}.encrypted_content must be a string`, `${at}.encrypted_content`);
  const sealed =
    typeof item.encrypted_content === "string" && item.encrypted_content ? openReasoning(item.encrypted_content) : null;
  return {
    type: "reasoning",
    text,
    origin: sealed?.origin ?? null,
    ...(sealed && { opaque: sealed.opaque }),
    ...(sealed?.redacted && { redacted: true }),
    ...(typeof item.id === "string" && { id: item.id }),
  };
}

const EFFORTS = { minimal: "minimal", low: "low", medium: "medium", high: "high", xhigh: "high" } as const;

type Effort = NonNullable<IrRequest["reasoning"]>["effort"];

function decodeEffort(reasoning: unknown): Effort {
  if (reasoning == null) return undefined;
  if (typeof reasoning !== "object") return refuse("reasoning must be an object", "reasoning");
  const effort = (reasoning as any).effort;
  if (effort == null || effort === "none") return undefined;
  const mapped = EFFORTS[effort as keyof typeof EFFORTS];
  return (
    mapped ??
    refuse(
      `reasoning.effort ${JSON.stringify(effort)} is not one of none, minimal, low, medium, high, xhigh`,
      "reasoning.effort",
    )
  );
}

function decodeFormat(text: unknown): IrRequest["responseFormat"] {
  const format = (text as any)?.format;
  if (format == null || format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type === "json_schema") {
    if (typeof format.schema !== "object" || format.schema === null)
      return refuse("text.format.schema must be an object", "text.format.schema");
    return {
      type: "json_schema",
      name: typeof format.name === "string" ? format.name : "response",
      schema: format.schema,
      ...(typeof format.strict === "boolean" && { strict: format.strict }),
    };
  }
  return refuse(`text.format type ${JSON.stringify(format.type)} is not supported`, "text.format");
}
