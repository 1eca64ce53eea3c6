// Small pieces the protocol modules share: reading a token limit, dropping the gateway's own `max_credits`
// field, and the OpenAI-family error body.

import { ApiError } from "../../http/errors";
import type { ErrorInfo, UpstreamBody } from "./types";

/** Deeper than any real request (tool schemas included); far shallower than JSON.stringify's recursion can take. */
export const MAX_NESTING = 256;

/** Whether `v` nests objects or arrays more than `limit` levels deep (stops looking at the limit). */
export function deeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value))
    if (deeperThan(child, limit - 1)) return true;
  return false;
}

/**
 * A parsed request body (or part of one) as JSON text again, for the rare bodies that must change before they go
 * upstream. JSON.parse takes any depth; JSON.stringify recurses and, on a body nested some 50,000 levels deep
 * (100 KB of brackets), overflows the stack after blocking the event loop for over a second: such a body is the
 * caller's 400, found before any of that.
 */
export function reserialised(value: unknown): string {
  if (deeperThan(value, MAX_NESTING))
    throw new ApiError(400, "invalid_request", `The request body is nested more than ${MAX_NESTING} levels deep.`);
  return JSON.stringify(value);
}

/** A usable token limit: a positive safe integer; anything else is left for the upstream to reject. */
export function positiveInt(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
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
export function passthroughBody(body: any, bytes: Uint8Array): UpstreamBody {
  if (!hasMaxCredits(body)) return { body: bytes, stripUsageChunk: false };
  return { body: reserialised(withoutMaxCredits(body)), stripUsageChunk: false };
}

/** At `at`, `removed` of the client's bytes replaced by `insert` (UTF-8). */
type Edit = readonly [at: number, removed: number, insert: Uint8Array];

/**
 * The client's bytes with a few short edits (chat's include_usage, the upstream's name for the model), put together
 * only when handed to fetch (sendable). A 180 KB copy made for every call, and collected after it, cost an agent
 * turn 9–14% of its CPU (docs/architecture.md, "Where the time goes"); writing into one buffer already in use costs
 * a memcpy. Safe to reuse because fetch copies a buffer it is given before it returns (the Fetch standard's
 * "extract a body"; test/llm/spliced-body.test.ts holds Bun to it).
 */
export class SplicedBody {
  readonly byteLength: number;
  constructor(
    readonly bytes: Uint8Array,
    readonly edits: readonly Edit[],
  ) {
    this.byteLength = edits.reduce((n, [, removed, insert]) => n - removed + insert.length, bytes.length);
  }

  /** The same with one more edit, which must not overlap the others. */
  with(at: number, removed: number, insert: string): SplicedBody {
    const edit: Edit = [at, removed, Buffer.from(insert)];
    return new SplicedBody(
      this.bytes,
      [...this.edits, edit].sort((a, b) => a[0] - b[0]),
    );
  }

  /** Writes the edited bytes into `out` (at least byteLength long). */
  writeTo(out: Uint8Array): void {
    let from = 0;
    let to = 0;
    for (const [at, removed, insert] of this.edits) {
      out.set(this.bytes.subarray(from, at), to);
      to += at - from;
      out.set(insert, to);
      to += insert.length;
      from = at + removed;
    }
    out.set(this.bytes.subarray(from), to);
  }

  /** A copy of its own, for whatever keeps the bytes. */
  toBytes(): Uint8Array {
    const out = new Uint8Array(this.byteLength);
    this.writeTo(out);
    return out;
  }
}

/** The client's bytes with `removed` bytes at `at` replaced by `insert`. */
export function splicedBytes(bytes: Uint8Array, at: number, removed: number, insert: string): SplicedBody {
  return new SplicedBody(bytes, []).with(at, removed, insert);
}

/** Bodies up to this size are put together in the shared buffer (which keeps the largest size it has held). */
const SHARED_MAX_BYTES = 1024 * 1024;
let shared = new Uint8Array(0);

/**
 * A body as fetch takes it. A SplicedBody is written into the shared buffer, so the result must go straight into a
 * fetch call (which copies it) and be kept nowhere: the next call writes over it.
 */
export function sendable(body: string | Uint8Array | SplicedBody): string | Uint8Array {
  if (!(body instanceof SplicedBody)) return body;
  if (body.byteLength > SHARED_MAX_BYTES) return body.toBytes();
  if (shared.length < body.byteLength) shared = new Uint8Array(Math.min(SHARED_MAX_BYTES, body.byteLength * 2));
  body.writeTo(shared);
  return shared.subarray(0, body.byteLength);
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
export function openAiErrorBody(info: ErrorInfo): object {
  const type =
    info.type ?? OPENAI_TYPE_BY_STATUS[info.status] ?? (info.status >= 500 ? "server_error" : "invalid_request_error");
  return {
    error: { message: info.message, type, code: info.code, param: info.param ?? null },
    request_id: info.requestId,
  };
}
