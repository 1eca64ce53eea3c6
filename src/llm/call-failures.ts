// How a metered call ends when its answer cannot be forwarded as the upstream's: the client left, the upstream
// could not be reached or went silent, it answered an error status or something that is not the protocol's answer,
// or its stream broke. Each voids the reservation (or charges the input estimate when the client left after the
// request went upstream) and answers in the caller's protocol.

import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import type { ErrorInfo, LlmProtocol } from "./protocols/index";
import { endCall, type Call } from "./call";
import { estimateVerdict, NOTHING_SEEN, UPSTREAM_SILENT } from "./meter";
import type { StreamCut } from "./pump";
import { TIMED_OUT_MESSAGE, upstreamTimeoutError, UpstreamTimeout } from "./timeouts";

const RETRY_HINTS = ["retry-after", "retry-after-ms", "x-should-retry"];

/** The headers of our answer: the upstream's content-type (and retry hints on errors), our ids and limits. */
export function answerHeaders(res: Response, base: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {
    ...base,
    "content-type": res.headers.get("content-type") ?? "application/json",
  };
  if (res.status >= 400) {
    for (const name of RETRY_HINTS) {
      const value = res.headers.get(name);
      if (value !== null) headers[name] = value;
    }
  }
  return headers;
}

const UPSTREAM_BROKE =
  "The upstream's connection broke before its answer was complete; nothing was charged. Retry the request.";

const SHUTTING_DOWN =
  "The gateway is restarting and ended this stream before its answer was complete; what you received is charged. Retry the request.";

const ENDED_EARLY =
  "The upstream ended its stream before the answer was complete; nothing was charged. Retry the request.";

/**
 * The event that ends a stream whose upstream dropped, or that the gateway's shutdown ended, in `proto`'s in-stream
 * error shape (pump.ts sends it).
 */
export function dropNoticeFor(
  proto: LlmProtocol,
  requestId: string,
): ((lastSent: Uint8Array | null, why: StreamCut) => Uint8Array) | undefined {
  const event = proto.droppedStreamEvent;
  if (!event) return undefined;
  const errors: Record<StreamCut, ErrorInfo> = {
    dropped: { status: 502, type: "server_error", code: "upstream_bad_response", message: UPSTREAM_BROKE, requestId },
    ended_early: { status: 502, type: "server_error", code: "upstream_bad_response", message: ENDED_EARLY, requestId },
    timeout: { status: 504, type: "server_error", code: "upstream_timeout", message: TIMED_OUT_MESSAGE, requestId },
    shutdown: {
      status: 503,
      type: "service_unavailable",
      code: "gateway_shutting_down",
      message: SHUTTING_DOWN,
      requestId,
    },
  };
  return (lastSent, why) => new TextEncoder().encode(event(errors[why], lastSent));
}

const UNUSABLE =
  "The upstream's answer was not a usable response for this API; nothing was charged. Retry the request.";

/**
 * A 200 that is not the protocol's answer: released, logged with what the upstream sent (its status and content
 * type, never its body), and a 502 for the client. `cancel`: stops reading the upstream's body, if still open.
 */
export function unusableAnswer(
  call: Call,
  status: number,
  contentType: string,
  why: string,
  cancel: (() => Promise<void>) | null,
): never {
  cancel?.().catch(() => {});
  const error = why.startsWith("unusable upstream answer") ? why : `unusable upstream answer: ${why}`;
  logUnusable(call, status, contentType, error);
  endCall(call, { outcome: "upstream_bad_response", charge: null, usage: null, error }, status, null);
  throw new ApiError(502, "upstream_bad_response", UNUSABLE);
}

export function logUnusable(call: Call, status: number, contentType: string, error: string | undefined): void {
  const fields = {
    request_id: call.requestId,
    provider: call.model.provider,
    model: call.model.id,
    upstream_status: status,
    content_type: contentType.slice(0, 100),
    error,
  };
  call.deps.ctx.log.warn("llm upstream answer unusable; released", fields);
}

/**
 * Reading an answer failed before any of it reached the client: the client left (input estimate, as
 * for any abort), or the answer could not be read (a connection broken mid-body), which gets a clean 502 instead
 * of a truncated body. Nothing is charged for a broken answer.
 */
export function answerUnread(
  call: Call,
  e: unknown,
  status: number,
  error = "upstream connection ended early",
  message = UPSTREAM_BROKE,
): Response {
  if (call.request.signal.aborted) return upstreamFailed(call, e);
  if (e instanceof UpstreamTimeout) {
    endCall(call, { outcome: "upstream_timeout", charge: null, usage: null, error: UPSTREAM_SILENT }, status, null);
    throw upstreamTimeoutError(call.provider.name);
  }
  endCall(call, { outcome: "dropped", charge: null, usage: null, error }, status, null);
  throw new ApiError(502, "upstream_bad_response", message);
}

/**
 * The client left before anything went upstream (while its hold waited for a commit, say): nothing was sent, so
 * nothing is charged. fetch with a signal already aborted sends nothing either, but upstreamFailed cannot tell that
 * from a request the upstream had begun to read.
 */
export function clientGoneBeforeUpstream(call: Call): Response {
  endCall(
    call,
    { outcome: "client_abort", charge: null, usage: null, error: "client left before the request went upstream" },
    null,
    null,
  );
  return new Response(null, { status: 499 });
}

/** No answer from the upstream: the client left first (post the input estimate) or it could not be reached. */
export function upstreamFailed(call: Call, error: unknown): Response {
  if (call.request.signal.aborted) {
    // The upstream may already have read the prompt: input estimate, no output, never above the hold.
    endCall(call, estimateVerdict(NOTHING_SEEN, call.model, call.plan, "client_abort"), null, null);
    return new Response(null, { status: 499 });
  }
  const timedOut = error instanceof ApiError && error.code === "upstream_timeout";
  endCall(
    call,
    {
      outcome: timedOut ? "upstream_timeout" : "upstream_error",
      charge: null,
      usage: null,
      error: (error as Error).message,
    },
    null,
    null,
  );
  throw error;
}

/** A call the upstream answered with an error status ends charged nothing; the gateway's own side throws a 502. */
export function endUpstreamError(call: Call, res: Response): void {
  endCall(
    call,
    { outcome: "upstream_error", charge: null, usage: null, error: `upstream answered ${res.status}` },
    res.status,
    performance.now(),
  );
  throwIfGatewaySide(call.deps.ctx, call.provider.name, res, call.requestId);
}

/**
 * An upstream error status: passed through as it came (body, content-type, retry hints); nothing charged. Except
 * the statuses about the gateway's side: its account with the provider, a redirecting base URL (throwIfGatewaySide).
 */
export function upstreamError(call: Call, res: Response): Response {
  endUpstreamError(call, res);
  return new Response(res.body, { status: res.status, headers: answerHeaders(res, call.baseHeaders) });
}

/**
 * Upstream answers about the gateway's side, never the caller's; each becomes a 502 in the caller's protocol
 * (throws for those), and the operator learns the detail from the log:
 * - 401, 402, 403 are about the operator's account with the provider (a revoked key, an empty balance, a model the
 *   account may not use). Passed through, an SDK would tell the caller that their own key is invalid or their own
 *   credits ran out, and the body may show the operator's masked key or org id.
 * - a 3xx means the provider's base URL (*_BASE_URL) points at something that redirects: the gateway never follows
 *   (that would send the provider key wherever the redirect points), and a redirect passed on would point the
 *   caller's SDK, with the caller's gateway key, at the upstream.
 */
export function throwIfGatewaySide(ctx: AppContext, provider: string, res: Response, requestId: string): void {
  const status = res.status;
  const redirect = status >= 300 && status < 400;
  if (!redirect && status !== 401 && status !== 402 && status !== 403) return;
  void res.body?.cancel().catch(() => {});
  if (redirect) {
    ctx.log.warn("upstream answered a redirect; check its base URL setting", {
      provider,
      status,
      location: res.headers.get("location"),
      request_id: requestId,
    });
    throw new ApiError(
      502,
      "upstream_bad_response",
      `The ${provider} upstream answered a redirect (status ${status}), which the gateway does not follow; nothing was charged. The operator has been told.`,
      {
        type: "service_unavailable",
      },
    );
  }
  ctx.log.warn("upstream refused the gateway's account", { provider, status, request_id: requestId });
  const why =
    status === 402 ? "refused it for billing reasons on the gateway's account" : "refused the gateway's credentials";
  throw new ApiError(
    502,
    status === 402 ? "upstream_billing_failed" : "upstream_auth_failed",
    `The ${provider} upstream ${why} (status ${status}); nothing was charged. The operator has been told.`,
    {
      type: "service_unavailable",
    },
  );
}

/** A call an error the gateway did not expect left open: voided, so its reservation does not stay held. */
export function voidLeftOpen(call: Call, error: unknown): void {
  if (call.ended) return;
  const message = `gateway error; released: ${(error as Error)?.message ?? error}`;
  endCall(call, { outcome: "failed", charge: null, usage: null, error: message }, null, null);
}
