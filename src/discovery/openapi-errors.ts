// The error side of /openapi.json (openapi.ts): the three error shapes as components, the upstream's own error that
// an LLM endpoint passes on, and an error response that names its codes in the shape of its path's surface.

import { errorBody, surfaceFor } from "../http/surfaces";

type Json = Record<string, any>;

const exampleError = (surface: "openai" | "anthropic" | "envelope", status: number, code: string, message: string) =>
  errorBody(
    surface,
    {
      status,
      code,
      message,
      type: status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : "invalid_request_error",
      param: undefined,
    },
    "req_0195f2c5a1b27c3d9e8f00112233aabb",
  );

export const ErrorSchema = {
  type: "object",
  description: "The error shape of every path except /v1/messages and /api/v1/jobs/*.",
  required: ["error", "request_id"],
  properties: {
    error: {
      type: "object",
      required: ["message", "type", "code"],
      properties: {
        message: { type: "string", description: "Human-readable text." },
        type: {
          type: "string",
          description:
            "Category, e.g. `invalid_request_error`, `authentication_error`, `insufficient_quota`, `rate_limit_error`, `gateway_error`.",
        },
        code: {
          type: "string",
          description:
            "Stable machine-readable code, e.g. `insufficient_credits`, `invalid_api_key`, `rate_limit_exceeded`.",
        },
        param: { type: ["string", "null"], description: "The request field at fault, when there is one." },
      },
    },
    request_id: { type: "string", description: "Same as the `x-request-id` response header." },
  },
  examples: [
    exampleError(
      "openai",
      402,
      "insufficient_credits",
      "Insufficient credits: this request needs up to 12.5 credits and 3 are available.",
    ),
  ],
};

export const AnthropicErrorSchema = {
  type: "object",
  description: "The error shape of /v1/messages (Anthropic Messages protocol).",
  required: ["type", "error"],
  properties: {
    type: { const: "error" },
    error: {
      type: "object",
      required: ["type", "message"],
      properties: {
        type: { type: "string", description: "e.g. `authentication_error`, `rate_limit_error`, `overloaded_error`." },
        message: { type: "string" },
        code: { type: "string" },
      },
    },
    request_id: { type: "string" },
  },
  examples: [exampleError("anthropic", 401, "invalid_api_key", "Invalid or revoked API key.")],
};

export const EnvelopeErrorSchema = {
  type: "object",
  description:
    "The error envelope of /api/v1/jobs/*: `code` equals the HTTP status; success is `code` 200 with `msg` `success`.",
  required: ["code", "msg", "data"],
  properties: {
    code: { type: "integer" },
    msg: { type: "string" },
    data: { type: "null" },
    error_code: { type: "string" },
    request_id: { type: "string" },
  },
  examples: [
    exampleError(
      "envelope",
      429,
      "rate_limit_exceeded",
      "Rate limit of 5 requests per 10 s reached for this key; retry in 4 s.",
    ),
  ],
};

// An upstream's error on an LLM endpoint is passed through as it came (llm/call-failures.ts upstreamError): its
// status, and a body in the protocol's shape whose `code` the provider may leave null and which has no request_id.
export const UpstreamErrorSchema = {
  type: "object",
  description:
    "An upstream provider's own error on an LLM endpoint, passed through with its status: `code` is the provider's (null or absent when it gives none), and the gateway's request id is in the `x-request-id` header only.",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["message"],
      properties: {
        message: { type: "string" },
        type: { type: ["string", "null"] },
        code: { type: ["string", "null"] },
        param: { type: ["string", "null"] },
      },
    },
  },
};

// "page": the dashboard, hidden from the document; its JSON fallback is the OpenAI shape.
const schemaRefFor = {
  openai: "Error",
  anthropic: "AnthropicError",
  envelope: "EnvelopeError",
  page: "Error",
} as const;

/**
 * An error response that names its codes, in the description (for people) and `x-error-codes` (for tools). On an
 * operation that passes upstream errors on (`x-upstream-errors`), the upstream's own error may come instead: its
 * shape is allowed (the Anthropic shape already allows it) and the response says so.
 */
export function errorResponse(
  path: string,
  description: string,
  codes: string[],
  headers?: Json,
  upstream = false,
): Json {
  const own = { $ref: `#/components/schemas/${schemaRefFor[surfaceFor(path)]}` };
  const schema =
    upstream && surfaceFor(path) === "openai" ? { anyOf: [own, { $ref: "#/components/schemas/UpstreamError" }] } : own;
  return {
    description:
      `${description} Codes: ${codes.map((c) => `\`${c}\``).join(", ")}.` +
      (upstream ? " Or the upstream's own error, passed through with its status and body." : ""),
    "x-error-codes": codes,
    ...(upstream ? { "x-upstream-errors": true } : {}),
    ...(headers ? { headers } : {}),
    content: { "application/json": { schema } },
  };
}

export const statusText: Record<number, string> = {
  400: "The request is malformed.",
  402: "Not enough credits, or over `max_credits`.",
  403: "Refused.",
  404: "Not found.",
  408: "The request body did not arrive in time.",
  409: "Conflicts with the current state.",
  410: "Gone.",
  413: "The request body is too large.",
  422: "The request failed validation; `param` names the field.",
  429: "Too many requests.",
  501: "Not supported.",
  502: "The upstream failed.",
  503: "Temporarily unavailable; retry later.",
};
