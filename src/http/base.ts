import { Elysia } from "elysia";
import type { Logger } from "../log";
import { ApiError, nulRefused } from "./errors";
import { errorBody, pageErrors, surfaceFor } from "./surfaces";
import { wrongPathHint } from "./wrong-path";

// Cross-cutting plugin applied once at the root: a request id on every response (both header spellings the SDKs
// read: `x-request-id` for OpenAI, `request-id` for Anthropic), and one mapper from every error to the caller's
// protocol shape. Nothing escapes as a bare 500 page.

export function requestIdOf(set: { headers: Record<string, any> }): string {
  return set.headers["x-request-id"] as string;
}

// What is known of a request from its first moment, kept by request for the access log and request metrics
// (ops/routes.ts): its id (a handler that puts the headers on its own Response empties `set.headers`, llm/routes.ts
// says why, and Bun has taken a sent Response's headers by the time it is logged) and when it arrived.
export interface RequestMark {
  id: string;
  startedAt: number;
}
const marks = new WeakMap<Request, RequestMark>();

export function requestMarkOf(request: Request): RequestMark | undefined {
  return marks.get(request);
}

/**
 * The most of an error's message and param an answer carries. Messages quote what the caller sent (a model's name, a
 * field's); a caller who sends a name of a megabyte must not get it back, two or three times over.
 */
const MAX_MESSAGE_CHARS = 1000;
const MAX_PARAM_CHARS = 200;

export function errorResponse(
  path: string,
  error: ApiError,
  requestId: string,
  extraHeaders?: Record<string, any>,
): Response {
  const surface = surfaceFor(path);
  const clippedError = {
    status: error.status,
    code: error.code,
    type: error.type,
    headers: error.headers,
    message: clipped(error.message, MAX_MESSAGE_CHARS),
    param: error.param === undefined ? undefined : clipped(error.param, MAX_PARAM_CHARS),
  };
  if (surface === "page" && pageErrors) {
    const page = pageErrors(clippedError);
    for (const [k, v] of Object.entries({
      "x-request-id": requestId,
      "request-id": requestId,
      ...clippedError.headers,
    }))
      page.headers.set(k, v);
    return page;
  }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-request-id": requestId,
    "request-id": requestId,
  };
  for (const [k, v] of Object.entries(extraHeaders ?? {})) if (typeof v === "string") headers[k] = v;
  Object.assign(headers, clippedError.headers);
  return new Response(JSON.stringify(errorBody(surface, clippedError, requestId)), {
    status: clippedError.status,
    headers,
  });
}

/**
 * The methods each fixed path answers (filled by buildApp once every route is in): a path called with another
 * method gets 405 with `allow`, not a 404 that says the route does not exist.
 */
const methodsByPath = new Map<string, string[]>();
export function setRouteMethods(routes: ReadonlyArray<{ method: string; path: string }>) {
  methodsByPath.clear();
  for (const r of routes) {
    if (r.path.includes(":") || r.path.includes("*")) continue;
    (methodsByPath.get(r.path) ?? methodsByPath.set(r.path, []).get(r.path)!).push(r.method);
  }
}

function methodNotAllowed(path: string, method: string): ApiError | undefined {
  const allowed = methodsByPath.get(path);
  if (!allowed || allowed.includes(method) || (method === "HEAD" && allowed.includes("GET"))) return undefined;
  return new ApiError(405, "method_not_allowed", `${path} answers ${allowed.join(", ")}, not ${method}.`, {
    headers: { allow: allowed.join(", ") },
  });
}

function wrongBaseUrl(path: string, method: string): ApiError | undefined {
  const hint = wrongPathHint(method, path, (p) => methodsByPath.get(p)?.includes(method) ?? false);
  return hint ? new ApiError(404, "not_found", hint) : undefined;
}

export function basePlugin(log: Logger) {
  return new Elysia({ name: "base" })
    .onRequest(({ request, set }) => {
      const mark = newRequestMark();
      marks.set(request, mark);
      set.headers["x-request-id"] = mark.id;
      set.headers["request-id"] = mark.id;
      refuseNul(request);
    })
    .onError({ as: "global" }, ({ code, error: thrown, set, request, path }) => {
      const requestPath = path ?? new URL(request.url).pathname;
      const answer = errorAnswer(log, code, thrown, request, requestPath, requestIdOf(set));
      set.status = answer.status; // so the access log and metrics (onAfterResponse) see the status actually sent
      return errorResponse(requestPath, answer, requestIdOf(set), set.headers);
    });
}

/** A request's id and arrival, at its first moment. The id: a UUIDv7's 32 hex digits (its bytes in hex, no dashes to remove). */
export function newRequestMark(): RequestMark {
  return { id: "req_" + Bun.randomUUIDv7("buffer").toString("hex"), startedAt: performance.now() };
}

/** A path or query parameter holding U+0000 failed its lookup on Postgres with a 500 (errors.ts nulRefused). */
export function refuseNul(request: Request): void {
  if (request.url.includes("%00")) throw nulRefused();
}

/** Elysia's name for what a handler threw: its own `code`, else UNKNOWN (an ApiError's code is its own). */
export function errorCodeOf(error: unknown): string | number {
  return (error as { code?: string | number } | null)?.code ?? "UNKNOWN";
}

/**
 * Every error as the ApiError the caller gets, `code` being Elysia's name for it. An ApiError is an answer the
 * gateway chose (an upstream refused or unreachable: 502/503/504): a warning with its code. Anything else is a
 * defect: an error with its stack.
 */
export function errorAnswer(
  log: Logger,
  code: string | number,
  thrown: unknown,
  request: Request,
  requestPath: string,
  requestId: string,
): ApiError {
  const error = unwrapParse(code, thrown);
  const answer =
    (code === "NOT_FOUND" &&
      (methodNotAllowed(requestPath, request.method) || wrongBaseUrl(requestPath, request.method))) ||
    clientClosed(request, error) ||
    toApiError(code, error);
  if (error instanceof ApiError) {
    if (answer.status >= 500)
      log.warn("request failed", {
        path: requestPath,
        request_id: requestId,
        status: answer.status,
        code: answer.code,
        error: answer.message,
      });
  } else if (answer.status >= 500) {
    log.error("unhandled error", {
      path: requestPath,
      request_id: requestId,
      error: String((error as Error)?.stack ?? error),
    });
  }
  return answer;
}

/**
 * Elysia wraps whatever a parse hook throws in its ParseError: a 408 for a body that stalls (http/body-limits.ts), a
 * guard's refusal before the body is read (http/before-body.ts), or a guard's own failure (its database or limiter
 * down). Unwrapped, each is what it is: an ApiError, or a defect answered 500 and logged, never the caller's bad JSON.
 * Only a parse failure proper (no cause, or a SyntaxError) stays a ParseError: 400 invalid_json.
 */
function unwrapParse(code: string | number, error: unknown): unknown {
  if (code !== "PARSE") return error;
  const cause = (error as { cause?: unknown })?.cause;
  return cause === undefined || cause instanceof SyntaxError ? error : cause;
}

/**
 * A body that stopped arriving because the client closed its connection (reading it rejects with an AbortError):
 * the client's doing, 499 in the access log and metrics (nginx's "client closed request"), not the gateway's 500.
 * Nobody is left to read the answer.
 */
function clientClosed(request: Request, error: unknown): ApiError | undefined {
  if (!request.signal.aborted || (error as { name?: unknown })?.name !== "AbortError") return undefined;
  return new ApiError(499, "client_closed_request", "The client closed the connection before its request was read.");
}

function toApiError(code: string | number, error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  switch (code) {
    case "NOT_FOUND":
      return new ApiError(404, "not_found", "No such route.");
    case "PARSE":
      if ((error as { code?: unknown })?.code !== "PARSE") break; // a guard's failure, unwrapped: a defect
      return new ApiError(400, "invalid_json", "The request body is not valid JSON.");
    case "VALIDATION": {
      // The first error, found when Elysia made this one: its `all` would look for 64 more, and its summaries quote
      // the value (`… but found: <value>`) at any length. TypeBox's own message states the rule only; the field's
      // path is the caller's text, so it is cut short.
      const first = (error as { valueError?: { path?: string; message?: string; schema?: any } })?.valueError;
      const field =
        clipped(
          String(first?.path ?? "")
            .replace(/^\//, "")
            .replaceAll("/", "."),
        ) || undefined;
      const msg = integerRule(first) ?? first?.message ?? "The request is invalid.";
      return new ApiError(422, "invalid_request", field ? `${field}: ${msg}` : msg, { param: field });
    }
    case "INVALID_COOKIE_SIGNATURE":
      return new ApiError(401, "invalid_session", "Invalid session.");
  }
  return new ApiError(500, "internal_error", "The gateway failed to handle this request.");
}

/** `text`, or its first `max` characters and an ellipsis. */
function clipped(text: string, max = 100): string {
  return text.length <= max ? text : text.slice(0, max) + "…";
}

/**
 * Elysia's t.Integer is a union (a number, or a string of digits), whose TypeBox summary says only "should be one
 * of: 'integer', 'integer'": the rule it broke, with its bounds, instead.
 */
function integerRule(error: { message?: string; schema?: any } | undefined): string | undefined {
  if (error?.message !== "Expected union value") return undefined;
  const int = (error.schema?.anyOf as any[] | undefined)?.find((s) => s?.type === "integer");
  if (!int) return undefined;
  const lo: number | undefined = int.minimum;
  const hi: number | undefined = int.maximum;
  if (lo !== undefined && hi !== undefined) return `must be a whole number from ${lo} to ${hi}`;
  if (lo !== undefined) return `must be a whole number of at least ${lo}`;
  if (hi !== undefined) return `must be a whole number of at most ${hi}`;
  return "must be a whole number";
}
