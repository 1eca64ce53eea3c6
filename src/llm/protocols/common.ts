// Small pieces the protocol modules share: reading a token limit, dropping the gateway's own `max_credits`
// field, and the OpenAI-family error body.

import type { ErrorInfo } from "./types.ts";

/** A usable token limit: a positive safe integer; anything else is left for the upstream to reject. */
export function positiveInt(v: unknown): number | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : undefined;
}

export function hasMaxCredits(body: any): boolean {
  return typeof body === "object" && body !== null && body.max_credits !== undefined;
}

/**
 * The body without `max_credits`, re-serialised. Only called when the field is present: re-serialising is the
 * cost the hot path avoids, and the client opted into it by sending the field.
 */
export function withoutMaxCredits(body: Record<string, unknown>): Record<string, unknown> {
  const { max_credits: _dropped, ...rest } = body;
  return rest;
}

/** The common case for every protocol but chat streams: nothing to change except maybe `max_credits`. */
export function passthroughBody(body: any, raw: string): { raw: string; stripUsageChunk: boolean } {
  if (!hasMaxCredits(body)) return { raw, stripUsageChunk: false };
  return { raw: JSON.stringify(withoutMaxCredits(body)), stripUsageChunk: false };
}

const OPENAI_TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "insufficient_credits",
  403: "permission_error",
  404: "invalid_request_error",
  409: "invalid_request_error",
  413: "invalid_request_error",
  422: "invalid_request_error",
  429: "rate_limit_error",
};

/** `{"error":{"message","type","code","param":null},"request_id"}` — what the openai SDK reads into APIError. */
export function openAiErrorBody(e: ErrorInfo): object {
  const type = e.type ?? OPENAI_TYPE_BY_STATUS[e.status] ?? (e.status >= 500 ? "server_error" : "invalid_request_error");
  return { error: { message: e.message, type, code: e.code, param: null }, request_id: e.requestId };
}
