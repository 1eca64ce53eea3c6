// Limits on a request body, answered in the caller's protocol (an ApiError; each surface shapes it):
// - Time (408): REQUEST_BODY_TIMEOUT_SECONDS, plus a second per 64 KiB received, so a slow but steady upload gets
//   through while a client dribbling bytes cannot hold a handler (Bun's own idle timeout is minutes long, for LLM
//   answers). The allowance grows with what arrived, never with the length the client states.
// - Size (413 `request_too_large`): over MAX_REQUEST_BODY_MB, at once when content-length says so. Bun's own limit
//   (an empty 413 an SDK cannot read) is set far above ours, as a backstop (serverLimitOf).

import { Elysia } from "elysia";
import { parseQuery } from "elysia/parse-query";
import { ApiError, nulRefused } from "./errors";

/** Bytes per second a body must keep arriving at once its base deadline has passed. */
const MIN_BYTES_PER_SECOND = 64 * 1024;

/**
 * The largest stated length read natively, with request.bytes(): one call, no per-chunk work, and nothing to pay at
 * all for a body already in (the usual LLM request). Its progress cannot be seen, so it is given the allowance of
 * its whole stated length up front: at most 16 s above the base deadline, all that a false content-length can buy.
 * A longer body is read chunk by chunk (readCounted), its allowance growing with what has arrived; reading it costs
 * little beside what is then done with a megabyte of JSON.
 */
const NATIVE_READ_MAX_BYTES = 1024 * 1024;

export function bodyTimeout(seconds: number): ApiError {
  return new ApiError(
    408,
    "request_timeout",
    `The request body did not arrive within ${seconds} s. Send it whole, then wait for the answer.`,
    {
      type: "invalid_request_error",
    },
  );
}

/** REQUEST_BODY_TIMEOUT_SECONDS and MAX_REQUEST_BODY_MB, as config.ts reads them. */
export interface BodyLimits {
  seconds: number;
  maxBytes: number;
}

/** Bun's maxRequestBodySize: a backstop far above MAX_REQUEST_BODY_MB, so that our 413 is the one sent. */
export function serverLimitOf(limits: BodyLimits): number {
  return Math.max(4 * limits.maxBytes, 1024 ** 3);
}

export function bodyTooLarge(maxBytes: number): ApiError {
  return new ApiError(
    413,
    "request_too_large",
    `The request body is larger than the ${maxBytes / 1024 ** 2} MiB this endpoint accepts.`,
    {
      type: "invalid_request_error",
    },
  );
}

/**
 * `read` of the body, or a 408 when it has not all arrived within `seconds` of now. A body already in needs no timer;
 * nor does one that arrives within this turn of the event loop, as every LLM request's does (Bun hands the body over
 * just after the handler's first wait: 3,000 of 3,000 in before a `setImmediate` ran). So the timer is set only by a
 * `setImmediate` that finds the body still on its way, for what is left of the deadline: a timer made and cleared per
 * call, and the race around it, cost a sequential call ~3 µs more (docs/architecture.md, bench/pieces.ts).
 */
function withDeadline<T>(seconds: number, read: Promise<T>): Promise<T> {
  if (Bun.peek.status(read) !== "pending") return read;
  const deadline = performance.now() + seconds * 1000;
  return new Promise<T>((resolve, reject) => {
    let timer: Timer | undefined;
    setImmediate(() => {
      if (Bun.peek.status(read) !== "pending") return;
      timer = setTimeout(() => reject(bodyTimeout(seconds)), Math.max(0, deadline - performance.now()));
    });
    read.then(
      (body) => {
        clearTimeout(timer);
        resolve(body);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/**
 * The body's bytes, or a 413 when there are too many, or a 408 when they have not arrived in time. A body stated at
 * up to NATIVE_READ_MAX_BYTES is read by Bun in one call (request.bytes(), the fast path); a longer or chunked one is
 * counted as it arrives, refused once past the limit without reading the rest, and timed by what has arrived.
 */
export function bodyBytes(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const header = request.headers.get("content-length");
  const stated = header === null ? undefined : Number(header);
  if (stated !== undefined && stated > limits.maxBytes) return Promise.reject(bodyTooLarge(limits.maxBytes));
  if (stated !== undefined && stated <= NATIVE_READ_MAX_BYTES)
    return withDeadline(limits.seconds + Math.floor(stated / MIN_BYTES_PER_SECOND), request.bytes());
  if (!request.body) return withDeadline(limits.seconds, request.bytes());
  return readCounted(request.body, limits);
}

/**
 * A body read chunk by chunk: refused (413) once past maxBytes, and (408) once it has taken longer than the base
 * deadline plus a second per MIN_BYTES_PER_SECOND received. One timer, set for when the bytes in so far run out
 * and set again only when it fires, so a body arriving at a good pace costs no timer work per chunk.
 */
async function readCounted(body: ReadableStream<Uint8Array>, limits: BodyLimits): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  const started = performance.now();
  const allowedMs = () => (limits.seconds + total / MIN_BYTES_PER_SECOND) * 1000;
  let late: ApiError | undefined;
  let timer: Timer | undefined;
  const watch = () => {
    const left = allowedMs() - (performance.now() - started);
    if (left > 0) return void (timer = setTimeout(watch, left));
    late = bodyTimeout(Math.floor(allowedMs() / 1000));
    void reader.cancel(late).catch(() => {}); // ends the read in flight as done; `late` is what the caller gets
  };
  timer = setTimeout(watch, allowedMs());
  try {
    for (;;) {
      const { done, value } = await reader.read().catch((e) => Promise.reject(late ?? e));
      if (late) throw late;
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxBytes) {
        void reader.cancel().catch(() => {});
        throw bodyTooLarge(limits.maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

const utf8 = new TextDecoder();
/** JSON must be UTF-8: bytes that are not are refused, not quietly made U+FFFD (a name or a prompt changed). */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The body's text, under the same limits. */
export async function bodyText(request: Request, limits: BodyLimits): Promise<string> {
  return utf8.decode(await bodyBytes(request, limits));
}

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

/** The parse hook as a plugin: `.use(bodyLimits(ctx))` in an instance applies it to that instance's routes. */
export function bodyLimits(ctx: { config: { body: BodyLimits } }) {
  // No name: Elysia deduplicates named plugins, and each instance that uses this one needs it.
  return new Elysia().onParse({ as: "scoped" }, limitedParser(ctx.config.body));
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

/** jsonObjectParser with SMALL_BODY_BYTES, for every route of the instance that uses it (the admin API). */
export function jsonObjectBodies(ctx: { config: { body: BodyLimits } }) {
  return new Elysia().onParse({ as: "scoped" }, jsonObjectParser(smallLimits(ctx)));
}

function smallLimits(ctx: { config: { body: BodyLimits } }): BodyLimits {
  return { ...ctx.config.body, maxBytes: Math.min(ctx.config.body.maxBytes, SMALL_BODY_BYTES) };
}
