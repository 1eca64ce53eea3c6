import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import pkg from "../../package.json";
import {
  AnthropicErrorSchema,
  EnvelopeErrorSchema,
  ErrorSchema,
  errorResponse,
  statusText,
  UpstreamErrorSchema,
} from "./openapi-errors";
import { llmSchemas } from "../llm/openapi-schemas";
import type { Catalog } from "../catalog/service";
import { documentMediaTypes } from "./media-docs";
import { documentPath, nameWildcard, numbersAreNumbers, restoreBody } from "./openapi-shape";

// The OpenAPI 3.1 document at /openapi.json. @elysiajs/openapi generates paths and schemas from the routes' own
// `body`/`query`/`params`/`response` schemas and `detail`; this file adds what routes should not each repeat: the
// security schemes they name (`bearer`, `apiKey`, `adminToken`), the error shapes as components and the error
// responses every operation can give, in the shape of its path's surface (openapi-errors.ts), and a few examples.
//
// A route whose body is not JSON says so with `...bodyType("text/html")` in its detail; one that can answer errors
// beyond its guards' lists them with `...errorCodes({ 410: ["file_expired"] })`. Both are turned into responses here
// and removed from the output. Every error response names its codes (description and `x-error-codes`).

type Json = Record<string, any>;

export { bodyType, errorCodes } from "../http/route-docs";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

// As http/idempotency.ts reads it: 1 to 255 characters, remembered per account for 24 hours.
const IDEMPOTENCY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes a retry safe: a repeat with the same key and body within 24 hours gets the first answer and is not charged again; " +
    "while the first still runs, 409 `idempotency_in_progress`; the same key with another body, 422 `idempotency_key_reused`.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

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
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "The same API key as `x-api-key: <key>`.",
        },
        adminToken: { type: "http", scheme: "bearer", description: "The operator's ADMIN_TOKEN, for /admin/v1 only." },
      },
      schemas: {
        Error: ErrorSchema,
        AnthropicError: AnthropicErrorSchema,
        EnvelopeError: EnvelopeErrorSchema,
        UpstreamError: UpstreamErrorSchema,
        ...llmSchemas,
      },
    },
  };
}

/** Generates the document for every route of `app` (the whole composed application). */
export function buildOpenApiDocument(app: AnyElysia, publicBaseUrl: string, catalog?: Catalog): Json {
  const generated = toOpenAPISchema(app, { staticFile: false }, undefined, undefined, "3.1.1") as Json;
  const routes: Array<{ method: string; path: string; hooks?: Json }> = (app as any).getGlobalRoutes();
  const routeOf = (method: string, path: string) =>
    routes.find((r) => r.method.toLowerCase() === method && r.path.replace(/:([^/]+)/g, "{$1}") === path);
  const base = baseDocument(publicBaseUrl);
  const doc: Json = {
    openapi: "3.1.1",
    ...base,
    paths: {},
    components: { ...base.components, schemas: { ...generated.components?.schemas, ...base.components.schemas } },
  };
  const tags = new Set<string>();
  for (const [rawPath, item] of Object.entries<Json>(generated.paths)) {
    const ops = METHODS.filter((m) => item[m]);
    const path = documentPath(
      rawPath,
      ops.map((m) => item[m]).find((op) => op["x-path-name"]),
    );
    for (const method of ops) {
      const op = item[method];
      restoreBody(op, routeOf(method, rawPath));
      nameWildcard(op);
      completeOperation(path, method, op);
      for (const t of op.tags ?? []) tags.add(t);
    }
    doc.paths[path] = item;
  }
  doc.tags = [...tags].sort().map((name) => ({ name }));
  numbersAreNumbers(doc);
  if (catalog) documentMediaTypes(doc, catalog, publicBaseUrl);
  return doc;
}

function completeOperation(path: string, method: string, op: Json) {
  op.responses ??= {};
  const contentType = op["x-content-type"];
  const declared: Record<string, string[]> = op["x-errors"] ?? {};
  const idempotent = op["x-idempotency-key"] === true;
  const upstream = op["x-upstream-errors"] === true;
  const alsoContent: Json = op["x-also-content"] ?? {};
  delete op["x-upstream-errors"];
  delete op["x-also-content"];
  const parameterSchemas: Record<string, Json> = op["x-parameter-schemas"] ?? {};
  delete op["x-parameter-schemas"];
  for (const p of op.parameters ?? []) if (parameterSchemas[p.name]) Object.assign(p.schema, parameterSchemas[p.name]);
  delete op["x-content-type"];
  delete op["x-errors"];
  delete op["x-idempotency-key"];
  if (!Object.keys(op.responses).some((s) => s.startsWith("2") || s.startsWith("3")))
    op.responses["200"] = { description: "Success." };
  for (const [status, r] of Object.entries<Json>(op.responses)) {
    if (contentType && status.startsWith("2") && method !== "head") {
      const schema = Object.values<Json>(r.content ?? {})[0]?.schema ?? { type: "string" };
      r.content = { [contentType]: { schema } };
    }
    if (status.startsWith("2") && method !== "head") r.content = { ...r.content, ...alsoContent };
    r.description ??= `Status ${status}.`;
    if (r.description.startsWith("Response for status")) r.description = "Success.";
  }
  const codes = new Map<number, string[]>(Object.entries(declared).map(([s, c]) => [Number(s), [...c]]));
  const add = (status: number, ...c: string[]) => codes.set(status, [...new Set([...(codes.get(status) ?? []), ...c])]);
  const schemes: string[] = (op.security ?? []).flatMap((s: Json) => Object.keys(s));
  if (schemes.includes("bearer") || schemes.includes("apiKey")) {
    add(401, "invalid_api_key", "key_expired");
    add(429, "rate_limit_exceeded");
  }
  if (schemes.includes("adminToken")) {
    add(401, "invalid_admin_token");
    add(403, "admin_disabled");
  }
  if (op.requestBody) {
    add(400, "invalid_json");
    // every body is read under http/body-limits.ts's deadline and size limit, whichever route reads it
    add(408, "request_timeout");
    add(413, "request_too_large");
  }
  if (idempotent) {
    op.parameters = [...(op.parameters ?? []), IDEMPOTENCY_PARAMETER];
    add(409, "idempotency_in_progress");
    add(422, "invalid_request", "idempotency_key_reused");
  }
  // A path parameter is any string: only a body or a query can fail validation.
  if (op.requestBody || op.parameters?.some((p: Json) => p.in !== "path")) add(422, "invalid_request");
  for (const [status, c] of [...codes].sort(([a], [b]) => a - b)) {
    const key = String(status);
    if (op.responses[key]?.content && !op.responses[key]["x-error-codes"]) continue; // declared on the route (e.g. /readyz's 503)
    op.responses[key] = errorResponse(
      path,
      statusText[status] ?? `Status ${status}.`,
      c,
      status === 429 ? rateHeaders : undefined,
      upstream,
    );
  }
  op.responses.default ??= errorResponse(
    path,
    "Any other error, in this path's error shape.",
    ["not_found", "method_not_allowed", "request_too_large", "internal_error"],
    undefined,
    upstream,
  );
  if (method === "head") for (const r of Object.values<Json>(op.responses)) delete r.content; // HEAD has no body
}
