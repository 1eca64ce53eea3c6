// Serving a Responses request from an upstream that only speaks Chat Completions (DeepSeek; the seed of
// cross-protocol routing). Self-contained: nothing here knows about keys, ledgers or HTTP.
//
//   responsesRequestToChat(body)          Responses request → Chat Completions request
//   chatResponseToResponses(json, ctx)    Chat answer → Responses answer
//   createChatToResponsesStream(ctx)      Chat SSE → Responses SSE (responses-chat-stream.ts)
//
// Decisions:
// - DeepSeek's reasoning_content becomes a `reasoning` output item with `reasoning_text` content (what the
//   Responses API uses for raw reasoning), streamed as response.reasoning_text.delta. Going back in, a reasoning
//   input item is attached as `reasoning_content` to the next assistant message: DeepSeek requires it back on
//   turns that called tools, and ignores it otherwise.
// - Only function tools translate; hosted tools (web_search, file_search, ...) have no chat equivalent and are
//   dropped. Only the first choice is translated.
// - Stateless: previous_response_id cannot be honoured (nothing is stored) and is refused with TranslationError,
//   as are input parts chat cannot carry (files, audio). The caller answers those with a 400.

import { deeperThan, MAX_NESTING } from "../protocols/common.ts";
import { chatUsageToResponses, functionCallItem, itemId, messageItem, reasoningItem, responseObject, statusFor, type TranslateContext } from "./responses-shape.ts";

export { createChatToResponsesStream, RESYNC } from "./responses-chat-stream.ts";
export { chatUsageToResponses, createTranslateContext, type TranslateContext } from "./responses-shape.ts";

export class TranslationError extends Error {
  constructor(message: string, readonly param?: string) {
    super(message);
    this.name = "TranslationError";
  }
}

type ChatMessage = Record<string, any>;

/** The request fields every translated answer repeats (responses-shape.ts responseObject). */
const ECHOED = ["instructions", "max_output_tokens", "parallel_tool_calls", "reasoning", "temperature", "text", "tool_choice", "tools", "top_p", "metadata"] as const;

export function responsesRequestToChat(body: Record<string, any>): Record<string, unknown> {
  // Checked first: the answer, its stream events included, is serialised only after the upstream has been paid for.
  for (const field of ECHOED) {
    if (deeperThan(body[field], MAX_NESTING)) throw new TranslationError(`${field} is nested more than ${MAX_NESTING} levels deep`, field);
  }
  if (body.previous_response_id != null) {
    throw new TranslationError("previous_response_id is not supported for this model; send the full conversation in input", "previous_response_id");
  }
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === "string" && body.instructions) messages.push({ role: "system", content: body.instructions });
  if (typeof body.input === "string") messages.push({ role: "user", content: body.input });
  else if (Array.isArray(body.input)) addItems(messages, body.input);
  else if (body.input != null) throw new TranslationError("input must be a string or an array of items", "input");

  const out: Record<string, unknown> = { model: body.model, messages };
  const tools = Array.isArray(body.tools) ? body.tools.filter((t: any) => t?.type === "function") : [];
  if (tools.length) {
    out.tools = tools.map((t: any) => ({
      type: "function",
      function: { name: t.name, ...(t.description != null && { description: t.description }), parameters: t.parameters ?? { type: "object", properties: {} } },
    }));
    if (body.tool_choice !== undefined) out.tool_choice = toolChoice(body.tool_choice);
  }
  if (typeof body.max_output_tokens === "number") out.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === "number") out.temperature = body.temperature;
  if (typeof body.top_p === "number") out.top_p = body.top_p;
  if (typeof body.reasoning?.effort === "string") out.reasoning_effort = body.reasoning.effort;
  const format = body.text?.format;
  if (format?.type === "json_object") out.response_format = { type: "json_object" };
  else if (format?.type === "json_schema") {
    out.response_format = { type: "json_schema", json_schema: { name: format.name, schema: format.schema, ...(format.strict != null && { strict: format.strict }) } };
  }
  if (body.stream === true) {
    out.stream = true;
    out.stream_options = { include_usage: true }; // metering needs it; the translation consumes it
  }
  return out;
}

function addItems(messages: ChatMessage[], items: any[]): void {
  let reasoning: string | undefined; // waiting for the assistant message it belongs to
  const assistant = (): ChatMessage => {
    const last = messages[messages.length - 1];
    if (last?.role === "assistant" && reasoning === undefined) return last;
    const m: ChatMessage = { role: "assistant", content: null };
    if (reasoning !== undefined) m.reasoning_content = reasoning;
    reasoning = undefined;
    messages.push(m);
    return m;
  };
  for (const item of items) {
    const type = item?.type ?? (item?.role ? "message" : undefined);
    if (type === "message") {
      const role = item.role === "developer" ? "system" : item.role;
      if (role === "assistant") {
        const m = assistant();
        m.content = (m.content ?? "") + textOf(item.content);
      } else {
        messages.push({ role, content: contentOf(item.content) });
      }
    } else if (type === "function_call") {
      const m = assistant();
      (m.tool_calls ??= []).push({ id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments ?? "" } });
    } else if (type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id, content: typeof item.output === "string" ? item.output : textOf(item.output) });
    } else if (type === "reasoning") {
      const parts = [item.content, item.summary].flatMap((v) => (Array.isArray(v) ? v : []));
      const text = parts.map((p: any) => (typeof p?.text === "string" ? p.text : "")).join("");
      if (text) reasoning = (reasoning ?? "") + text;
    } else if (type === "item_reference") {
      throw new TranslationError("item_reference is not supported for this model (nothing is stored)", "input");
    }
    // other item types (web_search_call, ...) are results of hosted tools this upstream never ran: skipped
  }
}

/** Text-only content collapses to a string (what every chat upstream accepts); images become image_url parts. */
function contentOf(content: unknown): unknown {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  if (content.every((p: any) => p?.type === "input_text" || p?.type === "output_text")) return textOf(content);
  return content.map((p: any) => {
    if (p?.type === "input_text" || p?.type === "output_text") return { type: "text", text: p.text };
    if (p?.type === "input_image" && typeof p.image_url === "string") {
      return { type: "image_url", image_url: { url: p.image_url, ...(p.detail && { detail: p.detail }) } };
    }
    throw new TranslationError(`input content part ${JSON.stringify(p?.type)} is not supported for this model`, "input");
  });
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p: any) => (typeof p?.text === "string" ? p.text : typeof p?.refusal === "string" ? p.refusal : "")).join("");
}

function toolChoice(c: any): unknown {
  if (typeof c === "string") return c; // auto | none | required
  if (c?.type === "function" && typeof c.name === "string") return { type: "function", function: { name: c.name } };
  return "auto";
}

/** A non-streaming chat answer as the Responses answer. */
export function chatResponseToResponses(chat: any, ctx: TranslateContext): Record<string, unknown> {
  const choice = chat?.choices?.[0];
  const msg = choice?.message ?? {};
  const { status, incomplete_details } = statusFor(choice?.finish_reason);
  const itemStatus = status === "incomplete" ? "incomplete" : "completed";
  const output: object[] = [];
  let n = 0;
  if (typeof msg.reasoning_content === "string" && msg.reasoning_content) output.push(reasoningItem(itemId(ctx, "rs", n++), msg.reasoning_content));
  if (typeof msg.content === "string" && msg.content) output.push(messageItem(itemId(ctx, "msg", n++), msg.content, itemStatus));
  for (const tc of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
    output.push(functionCallItem(itemId(ctx, "fc", n++), tc.id, tc.function?.name ?? "", tc.function?.arguments ?? "", itemStatus));
  }
  return responseObject(ctx, status, output, chatUsageToResponses(chat?.usage), { incomplete_details });
}
