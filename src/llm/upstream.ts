// One call to an upstream, with key rotation: keys are used in turn, and a 429, a 5xx, a 401/403 (that key refused)
// or a connection failure is retried once on the next key. Safe because nothing has reached the client yet: the
// proxy only answers once the upstream's status is known, and a retried attempt's body is discarded unread.

import { metrics } from "../ops/metrics";
import { ApiError } from "../http/errors";
import { nextAuth, type Provider } from "./providers";
import { upstreamTimeoutError, UpstreamTimeout } from "./timeouts";
import { sendable, type SplicedBody } from "./protocols/common";

// Client headers that carry protocol meaning and go upstream as sent. Everything else stays here: in particular
// the client's authorization / x-api-key (our key, never the vendor's).
const FORWARDED = ["accept", "anthropic-version", "anthropic-beta", "openai-beta"] as const;

/** Upstream headers without the key; built per request from the few headers that matter (no Headers copy). */
export function upstreamHeaders(client: Headers, provider: string): Record<string, string> {
  // identity: the body must reach the client byte for byte, and a compressed SSE stream would be buffered.
  const headers: Record<string, string> = { "content-type": "application/json", "accept-encoding": "identity" };
  for (const name of FORWARDED) {
    const value = client.get(name);
    if (value !== null) headers[name] = value;
  }
  if (provider === "anthropic" && headers["anthropic-version"] === undefined)
    headers["anthropic-version"] = "2023-06-01";
  return headers;
}

/** The client's query string (`?beta=true`), which goes upstream with the call. */
export function queryOf(request: Request): string {
  const i = request.url.indexOf("?");
  return i === -1 ? "" : request.url.slice(i);
}

/** Worth the next key: rate limits and server errors, and refusals of this key itself (revoked, no access). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500 || status === 401 || status === 403;
}

/** Aborts an upstream response's request (its body too), for a silence noticed where no reader can be cancelled. */
const aborts = new WeakMap<Response, AbortController>();

/**
 * POSTs `body` to `url`. Resolves with the upstream response (any status); rejects with a 502 ApiError when the
 * upstream cannot be reached, with a 504 `upstream_timeout` ApiError when its headers took longer than
 * `firstByteMs` (both attempts together; the request is aborted, and not tried again: the wait is spent), or with
 * the abort reason when `signal` fired (the client went away). The request's own signal follows `signal`, so the
 * client leaving aborts it at once, headers or body.
 */
export async function callUpstream(
  provider: Provider,
  url: string,
  headers: Record<string, string>,
  body: string | Uint8Array | SplicedBody,
  signal: AbortSignal,
  timeouts?: { firstByteMs: number },
): Promise<Response> {
  const upstream = new AbortController();
  // No `{ once: true }`: a signal aborts once, and the options object cost a sequential call ~1–2 µs (bench/pieces.ts).
  if (signal.aborted) upstream.abort(signal.reason);
  else signal.addEventListener("abort", () => upstream.abort(signal.reason));
  const timer = timeouts
    ? setTimeout(() => upstream.abort(new UpstreamTimeout("LLM_FIRST_BYTE_TIMEOUT_SECONDS")), timeouts.firstByteMs)
    : null;
  try {
    const attempts = provider.auth.length > 1 ? 2 : 1;
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const [name, value] = nextAuth(provider);
      headers[name] = value;
      let res: Response;
      try {
        // sendable: a spliced body is written into a shared buffer, so it goes straight into fetch (which copies it)
        res = await fetch(url, {
          method: "POST",
          headers,
          body: sendable(body),
          signal: upstream.signal,
          redirect: "manual",
        });
      } catch (e) {
        if (signal.aborted) throw e;
        // counted by the caller's record (call.ts endCall), as every timeout is
        if (upstream.signal.reason instanceof UpstreamTimeout) throw upstreamTimeoutError(provider.name);
        lastError = e;
        continue;
      }
      if (attempt + 1 < attempts && isRetryableStatus(res.status)) {
        void res.body?.cancel().catch(() => {});
        continue;
      }
      aborts.set(res, upstream);
      return res;
    }
    metrics.upstreamError(provider.name, "network");
    throw new ApiError(
      502,
      "upstream_unreachable",
      `The ${provider.name} upstream could not be reached (${describe(lastError)}).`,
    );
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/**
 * An upstream success with no body: 204 and 205 are the only 2xx statuses whose fetch Response has a null body (the
 * Fetch standard's null-body statuses; Bun's too). Asked by status because reading `res.body` makes Bun build a
 * ReadableStream that a JSON answer read whole (answer-head.ts readHead) never uses: ~0.9 µs per call.
 */
export function successWithoutBody(res: Response): boolean {
  return res.status === 204 || res.status === 205;
}

/** Aborts the request behind `res` (from callUpstream): its body's reads fail at once. */
export function abortUpstream(res: Response, reason: unknown): void {
  const upstream = aborts.get(res);
  if (upstream) upstream.abort(reason);
  else res.body?.cancel(reason).catch(() => {});
}

function describe(e: unknown): string {
  const code = (e as any)?.code;
  return typeof code === "string" ? code : "connection failed";
}
