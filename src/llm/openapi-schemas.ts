// The LLM endpoints in /openapi.json. Their bodies pass through to the provider and are read from raw bytes (no
// Elysia body validation on the hot path), so they are documented here, by hand: the fields each protocol defines
// that the gateway reads or documents, everything else left open (`additionalProperties: true`). Spread into a
// route's `detail` (llm/routes.ts); discovery/openapi.ts adds the error responses from `x-errors`.

import { takesIdempotencyKey } from "../http/route-docs";

type Json = Record<string, unknown>;
const open = (properties: Json, required: string[] = [], extra: Json = {}): Json => ({
  type: "object",
  additionalProperties: true,
  required,
  properties,
  ...extra,
});
const str = (description?: string): Json => ({ type: "string", ...(description && { description }) });
const int = (description?: string): Json => ({ type: "integer", ...(description && { description }) });
const anyObject: Json = { type: "object", additionalProperties: true };

export const maxCredits: Json = {
  type: ["number", "string", "null"],
  description:
    "Budget guard in credits (1 credit = 0.001 USD), a number or a decimal string: the most this call may cost. Refused with 402 `max_credits_exceeded` before any upstream work when the hold would be higher. Removed before the body goes upstream.",
};
const stream: Json = { type: "boolean", description: "Answer as server-sent events." };
const tools = (description: string): Json => ({ type: "array", description, items: anyObject });

const anthropicMessage = open(
  {
    role: { enum: ["user", "assistant"] },
    content: {
      oneOf: [str(), { type: "array", items: open({ type: str("text, image, tool_use, tool_result, …") }, ["type"]) }],
    },
  },
  ["role", "content"],
);
const anthropicUsage = open(
  {
    input_tokens: int(),
    output_tokens: int(),
    cache_creation_input_tokens: { type: ["integer", "null"] },
    cache_read_input_tokens: { type: ["integer", "null"] },
  },
  ["input_tokens", "output_tokens"],
);

const system: Json = {
  oneOf: [str(), { type: "array", items: anyObject }],
  description: "System prompt: text or text blocks.",
};
const AnthropicRequest = open(
  {
    model: str("A model id from GET /v1/models (endpoint /v1/messages)."),
    messages: { type: "array", items: anthropicMessage },
    system,
    max_tokens: int("Most output tokens; also sizes the credit hold."),
    stream,
    tools: tools("Tool definitions: {name, description, input_schema}."),
    tool_choice: anyObject,
    temperature: { type: "number" },
    max_credits: maxCredits,
  },
  ["model", "messages", "max_tokens"],
);

const AnthropicResponse = open(
  {
    id: str(),
    type: { const: "message" },
    role: { const: "assistant" },
    model: str(),
    content: { type: "array", items: open({ type: str("text, tool_use, thinking, …"), text: str() }, ["type"]) },
    stop_reason: { type: ["string", "null"] },
    usage: anthropicUsage,
  },
  ["id", "type", "role", "content", "model", "usage"],
);

const AnthropicEvent = open(
  {
    type: {
      enum: [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
      ],
    },
    message: AnthropicResponse,
    index: int(),
    content_block: anyObject,
    delta: anyObject,
    usage: anyObject,
    error: anyObject,
  },
  ["type"],
  { description: "The `data` of one server-sent event; its `event:` line repeats `type`." },
);

const CountTokensRequest = open(
  { model: str(), messages: { type: "array", items: anthropicMessage }, system, tools: tools("As on /v1/messages.") },
  ["model", "messages"],
);

const ResponsesRequest = open(
  {
    model: str("A model id from GET /v1/models (endpoint /v1/responses)."),
    input: {
      oneOf: [str(), { type: "array", items: anyObject }],
      description: "Text, or a list of input items (messages, tool outputs).",
    },
    instructions: str(),
    tools: tools("Function and built-in tool definitions."),
    max_output_tokens: int("Most output tokens, reasoning included; also sizes the credit hold."),
    stream,
    max_credits: maxCredits,
  },
  ["model", "input"],
);
const responsesUsage = open({ input_tokens: int(), output_tokens: int(), total_tokens: int() }, [
  "input_tokens",
  "output_tokens",
]);
const ResponsesResponse = open(
  {
    id: str(),
    object: { const: "response" },
    status: str("completed, incomplete, failed, …"),
    model: str(),
    output: { type: "array", items: anyObject },
    output_text: str(),
    // null until the answer is complete (the response.created and response.in_progress events carry it so)
    usage: { oneOf: [responsesUsage, { type: "null" }] },
  },
  ["id", "object", "status", "output"],
);
const ResponsesEvent = open(
  {
    type: str("response.created, response.output_text.delta, response.completed, error, …"),
    sequence_number: int(),
    response: ResponsesResponse,
    delta: str(),
  },
  ["type"],
  { description: "The `data` of one server-sent event." },
);

const chatMessage = open(
  {
    role: { enum: ["system", "developer", "user", "assistant", "tool"] },
    content: { oneOf: [str(), { type: "array", items: anyObject }, { type: "null" }] },
  },
  ["role"],
);
const ChatRequest = open(
  {
    model: str("A model id from GET /v1/models (endpoint /v1/chat/completions)."),
    messages: { type: "array", items: chatMessage },
    tools: tools("Function tool definitions."),
    max_completion_tokens: int("Most output tokens per choice; also sizes the credit hold."),
    max_tokens: int("The older name of max_completion_tokens."),
    n: int(),
    stream,
    stream_options: open({ include_usage: { type: "boolean" } }),
    max_credits: maxCredits,
  },
  ["model", "messages"],
);
const chatUsage = open({ prompt_tokens: int(), completion_tokens: int(), total_tokens: int() }, [
  "prompt_tokens",
  "completion_tokens",
]);
const ChatResponse = open(
  {
    id: str(),
    object: { const: "chat.completion" },
    created: int(),
    model: str(),
    choices: {
      type: "array",
      items: open({ index: int(), message: chatMessage, finish_reason: { type: ["string", "null"] } }),
    },
    usage: chatUsage,
  },
  ["id", "object", "choices", "model"],
);
const ChatChunk = open(
  {
    id: str(),
    object: { const: "chat.completion.chunk" },
    model: str(),
    choices: {
      type: "array",
      items: open({ index: int(), delta: anyObject, finish_reason: { type: ["string", "null"] } }),
    },
    usage: { oneOf: [chatUsage, { type: "null" }] },
  },
  ["object", "choices"],
  { description: "The `data` of one server-sent event; the stream ends with `data: [DONE]`." },
);

const EmbeddingsRequest = open(
  {
    model: str("A model id from GET /v1/models (endpoint /v1/embeddings)."),
    input: {
      oneOf: [
        str(),
        { type: "array", items: str() },
        { type: "array", items: int() },
        { type: "array", items: { type: "array", items: int() } },
      ],
    },
    encoding_format: { enum: ["float", "base64"] },
    dimensions: int(),
    max_credits: maxCredits,
  },
  ["model", "input"],
);
const EmbeddingsResponse = open(
  {
    object: { const: "list" },
    model: str(),
    data: {
      type: "array",
      items: open(
        {
          object: { const: "embedding" },
          index: int(),
          embedding: { oneOf: [{ type: "array", items: { type: "number" } }, str("base64")] },
        },
        ["index", "embedding"],
      ),
    },
    usage: open({ prompt_tokens: int(), total_tokens: int() }, ["prompt_tokens"]),
  },
  ["object", "data", "model", "usage"],
);

export const llmSchemas = {
  AnthropicMessagesRequest: AnthropicRequest,
  AnthropicMessage: AnthropicResponse,
  AnthropicStreamEvent: AnthropicEvent,
  CountTokensRequest,
  CountTokensResponse: open({ input_tokens: int() }, ["input_tokens"]),
  ResponsesRequest,
  OpenAIResponse: ResponsesResponse,
  ResponsesStreamEvent: ResponsesEvent,
  ChatCompletionRequest: ChatRequest,
  ChatCompletion: ChatResponse,
  ChatCompletionChunk: ChatChunk,
  // A stream that fails after its 200 ends with one `data:` holding the error (OpenAI's own convention) instead of a chunk.
  ChatCompletionStreamEvent: {
    description: "The `data` of one server-sent event: a chunk, or the error that ends a failed stream.",
    anyOf: [{ $ref: "#/components/schemas/ChatCompletionChunk" }, { $ref: "#/components/schemas/Error" }],
  },
  EmbeddingsRequest,
  EmbeddingsResponse,
};
type Name = keyof typeof llmSchemas;
const ref = (name: Name) => ({ $ref: `#/components/schemas/${name}` });

/** Errors every LLM call can give, by status (the codes are in common.ts, the proxy and call-failures.ts). */
const callErrors = {
  400: [
    "invalid_json",
    "invalid_request",
    "missing_model",
    "wrong_endpoint",
    "unsupported_parameter",
    "unsupported_for_model",
    "invalid_max_credits",
  ],
  403: ["model_not_allowed"],
  404: ["model_not_found"],
  408: ["request_timeout"],
  410: ["model_retired"],
  413: ["request_too_large"],
  501: ["provider_not_supported"],
  502: ["upstream_bad_response", "upstream_unreachable", "upstream_auth_failed", "upstream_billing_failed"],
  503: ["provider_not_configured", "ledger_unavailable", "limits_unavailable", "gateway_shutting_down"],
  504: ["upstream_timeout"],
};

/** A metered call's too: the credit checks, and a repeat under an Idempotency-Key whose stream was not kept. */
export const llmErrors = {
  ...callErrors,
  402: ["insufficient_credits", "max_credits_exceeded", "key_budget_exceeded"],
  409: ["idempotency_replay_unavailable"],
};

const forwardedHeader = (name: string, description: string): Json => ({
  name,
  in: "header",
  required: false,
  description,
  schema: { type: "string" },
});
/** What a protocol's clients send beside the body that goes upstream with a native call (llm/upstream.ts). */
const FORWARDED: Partial<Record<Name, Json[]>> = {
  AnthropicMessagesRequest: [
    {
      name: "beta",
      in: "query",
      required: false,
      description: "The Anthropic SDK's beta flag (`?beta=true`), passed on for Claude.",
      schema: { type: "string" },
    },
    forwardedHeader("anthropic-version", "Passed on for Claude, e.g. `2023-06-01`."),
    forwardedHeader("anthropic-beta", "Beta features, comma-separated; passed on for Claude."),
  ],
  ResponsesRequest: [forwardedHeader("openai-beta", "Passed on for models native on this endpoint.")],
  ChatCompletionRequest: [forwardedHeader("openai-beta", "Passed on for models native on this endpoint.")],
};
FORWARDED.CountTokensRequest = FORWARDED.AnthropicMessagesRequest;

/**
 * A route's `detail` additions: its request body and its JSON (and, when it streams, event-stream) answer. A free
 * endpoint (count_tokens) holds nothing and ignores an Idempotency-Key (llm/routes.ts): no credit refusals.
 */
export function llmDoc(request: Name, response: Name, event?: Name, metered = true): Json {
  const content: Json = { "application/json": { schema: ref(response) } };
  // OpenAPI 3.1 has no per-event schema for a stream: the event-stream's schema is that of one event's `data`.
  if (event)
    content["text/event-stream"] = {
      schema: { ...ref(event), description: `Server-sent events (\`stream: true\`); each \`data:\` is one ${event}.` },
    };
  return {
    ...(FORWARDED[request] ? { parameters: FORWARDED[request] } : {}),
    requestBody: { required: true, content: { "application/json": { schema: ref(request) } } },
    responses: {
      200: {
        description: event ? "The answer: JSON, or server-sent events when `stream` is true." : "The answer.",
        content,
      },
    },
    "x-errors": metered ? llmErrors : callErrors,
    "x-upstream-errors": true, // passed on as they came (discovery/openapi.ts)
    ...(metered ? takesIdempotencyKey() : {}),
  };
}
