// Bodies given their meaning under the limits (body-limits.ts reads the bytes): the Elysia parse hooks for the
// instances whose routes parse bodies, with JSON's depth, NUL and prototype-key rules and the forms as Elysia's own
// parsers give them.

import { parseQuery } from "elysia/parse-query";
import { bodyBytes, type BodyLimits } from "./body-limits";
import { ApiError, nulRefused } from "./errors";

const utf8 = new TextDecoder();
/** JSON must be UTF-8: bytes that are not are refused, not quietly made U+FFFD (a name or a prompt changed). */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

const isJsonType = (type: string) => type === "application/json" || type.endsWith("+json");

/**
 * An Elysia parse hook with the limits, for the instances whose routes parse bodies (media; with SMALL_BODY_BYTES
 * the dashboard and the public endpoints; the admin API takes JSON objects only: jsonObjectParser; the LLM routes
 * read their bodies themselves, with bodyBytes). A guard that must refuse a caller before its body is read goes
 * ahead of it (http/before-body.ts). Every body is read under the limits, whatever its type, and then given the
 * meaning Elysia's own parsers would: JSON (jsonBody), urlencoded and multipart forms (a name given once is its
 * value, given more often an array of them, as Elysia's parsers give them; a file field is a File), text, bytes. A
 * result is Elysia's body whenever it is not undefined; undefined would send Elysia to read the body a second time.
 */
export function limitedParser(limits: BodyLimits) {
  return async ({ request, contentType }: { request: Request; contentType: string }) => {
    if (!request.body) return undefined; // nothing to read; Elysia reads nothing either
    const type = (contentType ?? "").trim().toLowerCase(); // Elysia has cut off `; charset=…`
    const bytes = await bodyBytes(request, limits);
    if (type === "multipart/form-data") return withoutNul(await formFields(request, bytes));
    if (type === "application/octet-stream") return arrayBufferOf(bytes);
    if (type === "application/x-www-form-urlencoded") return withoutNul(parseQuery(utf8.decode(bytes)));
    if (type.startsWith("text/")) return withoutNul(utf8.decode(bytes));
    if (!isJsonType(type)) return {}; // read, and of no type a route takes
    return jsonBody(bytes);
  };
}

/**
 * The parse hook of an API that takes JSON objects only (the admin API): anything else is a 400, whatever its
 * schema would make of it (key creation, all of whose fields are optional, made a default key from `123`, `[]` or
 * a text/plain body). No body at all is `{}`: a route whose fields are all optional takes it.
 */
export function jsonObjectParser(limits: BodyLimits) {
  return async ({ request, contentType }: { request: Request; contentType: string }) => {
    if (!request.body) return {};
    const bytes = await bodyBytes(request, limits);
    if (bytes.byteLength === 0) return {};
    if (!isJsonType((contentType ?? "").trim().toLowerCase()))
      throw new ApiError(
        400,
        "invalid_request",
        "The request body must be a JSON object, sent as content-type: application/json.",
      );
    const body = jsonBody(bytes);
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw new ApiError(400, "invalid_request", "The request body must be a JSON object.");
    return body;
  };
}

/**
 * A JSON body's bytes parsed (an empty body counts as none: `{}`; a route that takes no body ignores it, one that
 * needs a body refuses `{}` by its schema). A 400 for bytes that are not UTF-8 or not JSON, for nesting deeper than
 * MAX_JSON_DEPTH and for an escaped NUL.
 */
function jsonBody(bytes: Uint8Array): unknown {
  let text: string;
  let body: unknown;
  try {
    text = strictUtf8.decode(bytes);
    if (!text.trim()) return {};
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "The request body is not valid JSON (UTF-8).");
  }
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) throw tooDeep();
  // Only a body whose text escapes a NUL is walked (a literal "\\u0000" in a string is text, and is let through).
  return text.includes("\\u0000") ? withoutNul(body) : body;
}

/**
 * The deepest nesting of objects and arrays a JSON body may have here: far more than any admin, dashboard or media
 * request needs. A deeper body is refused before schema validation, whose error message (Elysia's) is the whole
 * value pretty-printed, indented once per level: 40 KB of nested arrays made hundreds of megabytes of it and held
 * the event loop for seconds, and 50,000 levels overflowed the stack.
 */
export const MAX_JSON_DEPTH = 32;

function tooDeep(): ApiError {
  return new ApiError(400, "invalid_request", `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
}

/** Whether `v` nests objects or arrays more than `levels` deep; it looks no deeper than that. */
function nestedDeeperThan(v: unknown, levels: number): boolean {
  if (typeof v !== "object" || v === null) return false;
  if (levels === 0) return true;
  if (Array.isArray(v)) {
    for (const x of v) if (nestedDeeperThan(x, levels - 1)) return true;
    return false;
  }
  for (const k in v) if (nestedDeeperThan((v as Record<string, unknown>)[k], levels - 1)) return true;
  return false;
}

/** `value`, refused with a 400 (errors.ts nulRefused) when a string in it, a key or a value at any depth, holds U+0000. */
function withoutNul<T>(value: T): T {
  const holdsNul = (v: unknown): boolean => {
    if (typeof v === "string") return v.includes("\0");
    if (Array.isArray(v)) return v.some(holdsNul);
    if (v && typeof v === "object" && !(v instanceof Blob))
      return Object.entries(v).some(([k, x]) => k.includes("\0") || holdsNul(x));
    return false;
  };
  if (holdsNul(value)) throw nulRefused();
  return value;
}

const DANGEROUS_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** The bytes as the ArrayBuffer Elysia gives an octet-stream body (a copy only when they are part of a larger one). */
function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return (
    whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
  ) as ArrayBuffer;
}

/** A multipart body already read, as an object of its fields. */
async function formFields(request: Request, bytes: Uint8Array): Promise<Record<string, unknown>> {
  let form: Awaited<ReturnType<Response["formData"]>>;
  try {
    form = await new Response(bytes, {
      headers: { "content-type": request.headers.get("content-type") ?? "" },
    }).formData();
  } catch {
    throw new ApiError(400, "invalid_form", "The request body is not a well-formed multipart form.");
  }
  const fields: Record<string, unknown> = {};
  for (const key of new Set(form.keys())) {
    if (DANGEROUS_KEYS.has(key)) continue;
    const values = form.getAll(key);
    fields[key] = values.length === 1 ? values[0] : values;
  }
  return fields;
}

/**
 * The most the admin API, the dashboard and the public endpoints (estimate, upstream notices) take. Their bodies
 * are a few fields (an account, a key, a sign-in form, a price question), and every one of them can be sent by
 * someone not yet known to be allowed; MAX_REQUEST_BODY_MB is for the LLM and media task routes, whose callers
 * have a key and may send whole documents.
 */
export const SMALL_BODY_BYTES = 1024 ** 2;

/** limitedParser with SMALL_BODY_BYTES: for a route's own `parse` list, after the guards that go before it. */
export function smallBodyParser(ctx: { config: { body: BodyLimits } }) {
  return limitedParser(smallLimits(ctx));
}

function smallLimits(ctx: { config: { body: BodyLimits } }): BodyLimits {
  return { ...ctx.config.body, maxBytes: Math.min(ctx.config.body.maxBytes, SMALL_BODY_BYTES) };
}
