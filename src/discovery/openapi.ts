import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import pkg from "../../package.json";
import { errorBody, surfaceFor } from "../http/surfaces";

// The OpenAPI 3.1 document at /openapi.json. @elysiajs/openapi generates paths and schemas from the routes' own
// `body`/`query`/`params`/`response` schemas and `detail`; this file adds what routes should not each repeat: the
// security schemes they name (`bearer`, `apiKey`, `adminToken`), the three error shapes as components, the error
// responses every operation can give (in the shape of the surface its path belongs to), and a few examples.
//
// A route whose body is not JSON says so with `...bodyType("text/html")` in its detail; it is applied to the success
// response here and removed from the output.

type Json = Record<string, any>;

/** Spread into a route's `detail` when its success body is not JSON: `detail: { summary, ...bodyType("text/html") }`. */
export function bodyType(contentType: string): {} {
  return { "x-content-type": contentType };
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const exampleError = (surface: "openai" | "anthropic" | "envelope", status: number, code: string, message: string) =>
  errorBody(surface, { status, code, message, type: status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : "invalid_request_error", param: undefined }, "req_0195f2c5a1b27c3d9e8f00112233aabb");

const ErrorSchema = {
  type: "object",
  description: "The error shape of every path except /v1/messages and /api/v1/jobs/*.",
  required: ["error", "request_id"],
  properties: {
    error: {
      type: "object",
      required: ["message", "type", "code"],
      properties: {
        message: { type: "string", description: "Human-readable text." },
        type: { type: "string", description: "Category, e.g. `invalid_request_error`, `authentication_error`, `insufficient_quota`, `rate_limit_error`, `gateway_error`." },
        code: { type: "string", description: "Stable machine-readable code, e.g. `insufficient_credits`, `invalid_api_key`, `rate_limit_exceeded`." },
        param: { type: ["string", "null"], description: "The request field at fault, when there is one." },
      },
    },
    request_id: { type: "string", description: "Same as the `x-request-id` response header." },
  },
  examples: [exampleError("openai", 402, "insufficient_credits", "Insufficient credits: this request needs up to 12.5 credits and 3 are available.")],
};

const AnthropicErrorSchema = {
  type: "object",
  description: "The error shape of /v1/messages (Anthropic Messages protocol).",
  required: ["type", "error"],
  properties: {
    type: { const: "error" },
    error: {
      type: "object",
      required: ["type", "message"],
      properties: { type: { type: "string", description: "e.g. `authentication_error`, `rate_limit_error`, `overloaded_error`." }, message: { type: "string" }, code: { type: "string" } },
    },
    request_id: { type: "string" },
  },
  examples: [exampleError("anthropic", 401, "invalid_api_key", "Invalid or revoked API key.")],
};

const EnvelopeErrorSchema = {
  type: "object",
  description: "The error envelope of /api/v1/jobs/*: `code` equals the HTTP status; success is `code` 200 with `msg` `success`.",
  required: ["code", "msg", "data"],
  properties: {
    code: { type: "integer" },
    msg: { type: "string" },
    data: { type: "null" },
    error_code: { type: "string" },
    request_id: { type: "string" },
  },
  examples: [exampleError("envelope", 429, "rate_limit_exceeded", "Rate limit of 5 requests per 10 s reached for this key; retry in 4 s.")],
};

// "page": the dashboard, hidden from the document; its JSON fallback is the OpenAI shape.
const schemaRefFor = { openai: "Error", anthropic: "AnthropicError", envelope: "EnvelopeError", page: "Error" } as const;

function errorResponse(path: string, description: string, headers?: Json): Json {
  const ref = `#/components/schemas/${schemaRefFor[surfaceFor(path)]}`;
  return { description, ...(headers ? { headers } : {}), content: { "application/json": { schema: { $ref: ref } } } };
}

const rateHeaders = {
  "retry-after": { description: "Whole seconds to wait.", schema: { type: "integer" } },
  "x-ratelimit-limit": { schema: { type: "integer" } },
  "x-ratelimit-remaining": { schema: { type: "integer" } },
  "x-ratelimit-reset": { description: "Seconds until the window resets.", schema: { type: "integer" } },
};

export function baseDocument(publicBaseUrl: string): Json {
  return {
    info: {
      title: "Switchyard API",
      version: pkg.version,
      summary: "One API key and one prepaid credit wallet in front of many models.",
      description:
        "LLMs on their native wire protocols, embeddings, and image, video and audio models through one task API. " +
        "Authenticate with `Authorization: Bearer <key>` or `x-api-key: <key>`; keys come from the dashboard (Settings → API Keys). " +
        `Money is in credits (1 credit = 0.001 USD). See ${publicBaseUrl}/auth.md for keys and webhook signatures.`,
    },
    servers: [{ url: publicBaseUrl }],
    externalDocs: { description: "Authentication and webhook signing", url: `${publicBaseUrl}/auth.md` },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key as `Authorization: Bearer <key>`." },
        apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "The same API key as `x-api-key: <key>`." },
        adminToken: { type: "http", scheme: "bearer", description: "The operator's ADMIN_TOKEN, for /admin/v1 only." },
      },
      schemas: { Error: ErrorSchema, AnthropicError: AnthropicErrorSchema, EnvelopeError: EnvelopeErrorSchema },
    },
  };
}

/** Generates the document for every route of `app` (the whole composed application). */
export function buildOpenApiDocument(app: AnyElysia, publicBaseUrl: string): Json {
  const generated = toOpenAPISchema(app, { staticFile: false }, undefined, undefined, "3.1.1") as Json;
  const base = baseDocument(publicBaseUrl);
  const doc: Json = {
    openapi: "3.1.1",
    ...base,
    paths: {},
    components: { ...base.components, schemas: { ...generated.components?.schemas, ...base.components.schemas } },
  };
  const tags = new Set<string>();
  for (const [rawPath, item] of Object.entries<Json>(generated.paths)) {
    const path = rawPath.replace(/\*$/, "{wildcard}");
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (path !== rawPath) {
        op.parameters = [...(op.parameters ?? []).filter((p: Json) => p.name !== "*"), { name: "wildcard", in: "path", required: true, description: "The rest of the path; may contain `/`.", schema: { type: "string" } }];
        op.operationId = op.operationId.replace(/\*$/, "Wildcard");
      }
      withBodySchema(app, rawPath, method, op);
      completeOperation(path, method, op);
      for (const t of op.tags ?? []) tags.add(t);
    }
    doc.paths[path] = item;
  }
  doc.tags = [...tags].sort().map((name) => ({ name }));
  return doc;
}

/**
 * A route that reads its body with its own parser (the admin API's and media routes' body limits) gets a request
 * body with no content from the generator: its own body schema is put back, as JSON, so a generated client can
 * send every field.
 */
function withBodySchema(app: AnyElysia, path: string, method: string, op: Json) {
  if (!op.requestBody || Object.keys(op.requestBody.content ?? {}).length) return;
  const route = ((app as any).getGlobalRoutes() as Json[]).find((r) => r.method.toLowerCase() === method && r.path.replace(/:(\w+)/g, "{$1}") === path);
  const schema = route?.hooks?.body;
  if (schema) op.requestBody.content = { "application/json": { schema: JSON.parse(JSON.stringify(schema)) } };
}

function completeOperation(path: string, method: string, op: Json) {
  op.responses ??= {};
  const contentType = op["x-content-type"];
  delete op["x-content-type"];
  if (!Object.keys(op.responses).some((s) => s.startsWith("2") || s.startsWith("3"))) op.responses["200"] = { description: "Success." };
  for (const [status, r] of Object.entries<Json>(op.responses)) {
    if (contentType && status.startsWith("2") && method !== "head") {
      const schema = Object.values<Json>(r.content ?? {})[0]?.schema ?? { type: "string" };
      r.content = { [contentType]: { schema } };
    }
    r.description ??= `Status ${status}.`;
  }
  const schemes: string[] = (op.security ?? []).flatMap((s: Json) => Object.keys(s));
  if (schemes.includes("bearer") || schemes.includes("apiKey")) {
    op.responses["401"] ??= errorResponse(path, "Missing, unknown or revoked API key.");
    op.responses["429"] ??= errorResponse(path, "Rate limit reached for this key.", rateHeaders);
  }
  if (schemes.includes("adminToken")) {
    op.responses["401"] ??= errorResponse(path, "Missing or wrong admin token.");
    op.responses["403"] ??= errorResponse(path, "The admin API is disabled (ADMIN_TOKEN unset).");
  }
  if (op.requestBody || op.parameters?.length) op.responses["422"] ??= errorResponse(path, "The request failed validation; `param` names the field.");
  op.responses.default ??= errorResponse(path, "Any other error, in this path's error shape.");
  if (method === "head") for (const r of Object.values<Json>(op.responses)) delete r.content; // HEAD has no body
}
