// A request body must arrive within REQUEST_BODY_TIMEOUT_SECONDS of the handler asking for it. Bun closes a silent
// connection only after the server's idleTimeout (255 s, the most it allows, since an LLM answer may take minutes
// to start), so a client that sends headers and then part of a body, or a byte now and then, held a connection
// and a handler for minutes: on the public estimate endpoint, for anyone. Now it gets a 408 in its protocol's shape.

import { Elysia } from "elysia";
import { parseQuery } from "elysia/parse-query";
import { ApiError } from "./errors.ts";

export function bodyTimeout(seconds: number): ApiError {
  return new ApiError(408, "request_timeout", `The request body did not arrive within ${seconds} s. Send it whole, then wait for the answer.`, {
    type: "invalid_request_error",
  });
}

/**
 * The body's text, or a 408 when it has not all arrived within `seconds`. A body already in (nearly every one) is
 * returned without arming a timer.
 */
export async function bodyText(request: Request, seconds: number): Promise<string> {
  const text = request.text();
  if (Bun.peek.status(text) !== "pending") return text;
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(bodyTimeout(seconds)), seconds * 1000);
  });
  try {
    return await Promise.race([text, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An Elysia parse hook with the deadline, for the instances whose routes parse bodies (media, admin, dashboard;
 * the LLM routes read their bodies themselves, with bodyText). JSON and urlencoded forms are read as Elysia reads
 * them (request.json(), parseQuery), only with the deadline; any other type goes on to Elysia's own parsers.
 * Elysia takes a falsy result for "not parsed" and would read the body again: a JSON `null`, `0` or `false` body
 * is handed on boxed (every JSON body here must be an object; the route's schema then refuses it).
 */
export function deadlineParser(seconds: number) {
  return async ({ request, contentType }: { request: Request; contentType: string }) => {
    const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
    if (type === "application/x-www-form-urlencoded") return parseQuery(await bodyText(request, seconds));
    if (type !== "application/json") return undefined;
    const text = await bodyText(request, seconds);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError(400, "invalid_json", "The request body is not valid JSON.");
    }
    return value || Object(value);
  };
}

/** The parse hook as a plugin: `.use(bodyDeadline(ctx))` in an instance applies it to that instance's routes. */
export function bodyDeadline(ctx: { config: { bodyTimeoutSeconds: number } }) {
  // No name: Elysia deduplicates named plugins, and each instance that uses this one needs it.
  return new Elysia().onParse({ as: "scoped" }, deadlineParser(ctx.config.bodyTimeoutSeconds));
}
