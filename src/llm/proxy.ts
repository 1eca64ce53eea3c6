// The LLM proxy: one piece of code for every protocol (the protocol module answers the questions that differ).
//   body once → model → hold → upstream (key rotation) → answer streamed back as it arrives, tap on the side →
//   settle / release + usage record, queued off the response path (records.ts).
// Errors the gateway raises itself are thrown as ApiError and shaped per path by http/base.ts.

import { metrics } from "../ops/metrics.ts";
import type { AppContext } from "../context.ts";
import type { AuthContext } from "../accounts/service.ts";
import { refuseModelNotAllowed } from "../accounts/policy.ts";
import type { BudgetHold, KeyBudgets } from "../accounts/key-budgets.ts";
import { withCreditHint } from "./credit-hint.ts";
import type { Reservation } from "../ledger/float.ts";
import type { LlmModel } from "../catalog/model.ts";
import { ApiError } from "../http/errors.ts";
import { ALIAS_PATH } from "../media/model.ts";
import type { ErrorInfo, LlmProtocol, UpstreamBody } from "./protocols/index.ts";
import { NO_PAID_TOOLS, paidToolUse } from "./protocols/paid-tools.ts";
import { keySettingOf, spokenPath, type Provider, type Providers } from "./providers.ts";
import { callUpstream, upstreamHeaders } from "./upstream.ts";
import { answerFacts, answerTypeMisfit, firstNonSpace, isWholeAnswer, parseRequestBody, textOf, withoutBom, withUpstreamModel } from "./body.ts";
import { capAtMaxCredits, checkMaxCredits, judgeBody, judgeStream, NOTHING_SEEN, partial, planHold, UPSTREAM_SILENT, verdictOr, type HoldPlan, type Verdict } from "./meter.ts";
import type { LedgerBatch } from "./ledger-batch.ts";
import { pump, readArrived, readHead, throughTap, WHOLE_ANSWER_BYTES, type Head, type PumpEnd, type StreamCut } from "./pump.ts";
import { joined, tokenCounter } from "./bytes.ts";
import { bodyBytes } from "../http/body-limits.ts";
import { forwardTranslated, prepareTranslation, type Translation } from "./translated.ts";
import { countTokensEstimate } from "./count-tokens.ts";
import { withoutForeignReasoning } from "./foreign-reasoning.ts";
import { reserialised } from "./protocols/common.ts";
import { liftIdleTimeout, restoreIdleTimeout, TIMED_OUT_MESSAGE, upstreamTimeoutError, UpstreamTimeout, type IdleTimeouts, type LlmTimeouts } from "./timeouts.ts";

export interface LlmDeps {
  ctx: AppContext;
  providers: Providers;
  ledger: LedgerBatch;
  /** key budgets (accounts/key-budgets.ts): a hold beside the wallet's for a key with a budget */
  budgets: KeyBudgets;
  /** how long an upstream may keep a call waiting (timeouts.ts) */
  timeouts: LlmTimeouts;
}

/** Everything about one metered call, shared by the plain proxy and the translating one. */
export interface Call {
  d: LlmDeps;
  proto: LlmProtocol;
  path: string;
  request: Request;
  auth: AuthContext;
  requestId: string;
  /** headers every answer carries: request ids, rate-limit state */
  baseHeaders: Record<string, string>;
  body: Record<string, any>;
  /** what goes upstream (upstreamRequestOf); null on a translated call */
  upstream: UpstreamBody | null;
  /** a call on a protocol its provider does not speak: how it is translated (translated.ts); null: passed through */
  translation: Translation | null;
  model: LlmModel;
  provider: Provider;
  url: string;
  plan: HoldPlan;
  hold: Reservation;
  /** the key budget's hold, null for a key without a budget */
  budgetHold: BudgetHold | null;
  started: number;
  /** set by finish: the call's hold has been settled or released */
  finished: boolean;
  /** Bun's server, whose idle timeout is lifted for the call's connection while it runs (timeouts.ts) */
  server?: IdleTimeouts | null;
}

const utf8 = new TextDecoder();

export async function handleLlm(
  d: LlmDeps,
  proto: LlmProtocol,
  path: string,
  request: Request,
  auth: AuthContext,
  baseHeaders: Record<string, string>,
  server?: IdleTimeouts | null,
): Promise<Response> {
  const started = performance.now();
  const bytes = withoutBom(await bodyBytes(request, d.ctx.config.body));
  const raw = utf8.decode(bytes);
  const body = parseRequestBody(raw);
  const free = proto.freePaths.includes(path);
  const model = lookupModel(d, body, path, free);
  refuseModelNotAllowed(auth.models, body.model, model.id);
  const provider = d.providers.get(model.provider);
  // How the call is forwarded: passed through when the provider speaks the protocol called, else translated.
  const spoken = provider ? spokenPath(provider, model.endpoint) : model.endpoint;
  // count_tokens exists only in Anthropic's protocol: for a model spoken to in another, an estimate (count-tokens.ts).
  if (free && spoken !== "/v1/messages") return countTokensEstimate(proto, body, bytes, model, baseHeaders);
  const url = provider?.urls.get(free ? path : spoken);
  if (!provider || !url) throw new ApiError(501, "provider_not_supported", `Model ${model.id} is served by ${model.provider}, which this gateway cannot reach on ${path}.`);
  if (provider.auth.length === 0) {
    throw new ApiError(503, "provider_not_configured", `Model ${model.id} is unavailable: its provider (${model.provider}) has no API key configured on this gateway (${keySettingOf(model.provider)}).`, {
      type: "service_unavailable",
    });
  }
  const requestId = baseHeaders["x-request-id"]!;
  if (free) return forwardFree(d.ctx, request, url, provider, upstreamRequestOf(proto, body, bytes, model).body, baseHeaders);

  proto.refuseUnmeterable?.(body);
  // Decoded and encoded before the hold: a request that cannot be translated is refused with nothing held or sent.
  const translation = spoken === path ? null : prepareTranslation(path, spoken, body, model, provider, (msg, f) => d.ctx.log.warn(msg, { ...f, request_id: requestId }));
  // A translated call's hosted tools never reach the upstream (the codecs refuse them): no fees.
  const paid = translation || !proto.paidTools ? NO_PAID_TOOLS : paidToolUse(proto.paidTools, body, model);
  // The input estimate takes the larger of the client's bytes and the translated ones.
  const inputBytes = translation ? Math.max(bytes.byteLength, Buffer.byteLength(translation.text)) : bytes.byteLength;
  const plan = planHold(proto, body, inputBytes, model, paid);
  plan.cap = checkMaxCredits(body, plan.amount);
  const upstream = translation ? null : upstreamRequestOf(proto, body, bytes, model);
  // The key's budget first (402 key_budget_exceeded), then the wallet; a wallet that refuses gives the budget back.
  const budgetPending = d.budgets.hold(auth, plan.amount);
  const budgetHold = budgetPending && (await budgetPending);
  let hold: Reservation;
  try {
    hold = await d.ledger.hold(auth.accountId, plan.amount, requestId);
  } catch (e) {
    if (budgetHold) d.budgets.settle(budgetHold, 0);
    throw withCreditHint(e, proto.name, body, plan, proto.maxOutputTokens(body));
  }
  const call: Call = { d, proto, path, request, auth, requestId, baseHeaders, body, upstream, translation, model, provider, url, plan, hold, budgetHold, started, finished: false, server };
  // The hold may have waited for a commit; a client gone meanwhile is released here, before either path sends.
  if (request.signal.aborted) return clientGoneBeforeUpstream(call);
  try {
    return await (translation ? forwardTranslated(call) : forwardMetered(call));
  } catch (e) {
    // Every path above settles or releases before it throws; should one not, the hold must not stay held.
    if (!call.finished) finish(call, { outcome: "failed", charge: null, usage: null, error: `gateway error; released: ${(e as Error)?.message ?? e}` }, null, null);
    throw e;
  }
}

/**
 * What goes upstream, worked out before any hold: the client's bytes as they came; chat streams' include_usage and
 * the upstream's name for the model spliced into a copy of them; re-serialised text only when max_credits must go
 * or a splice cannot be trusted. Bytes save encoding the text again (~60 µs for the 200 KB bodies coding agents
 * send). A body that cannot be serialised again (protocols/common.ts reserialised) is refused here, before any hold.
 */
function upstreamRequestOf(proto: LlmProtocol, body: Record<string, any>, bytes: Uint8Array, model: LlmModel): UpstreamBody {
  const own = withoutForeignReasoning(proto.name, body, model.provider, model.upstream_model);
  if (own) {
    body = own;
    bytes = Buffer.from(reserialised(own));
  }
  const prepared = proto.prepareUpstreamBody(body, bytes);
  if (body.model === model.upstream_model) return prepared;
  return { body: withUpstreamModel(prepared.body, body.model, model.upstream_model), stripUsageChunk: prepared.stripUsageChunk };
}

/**
 * Every LLM is served on the three LLM paths (natively on one, translated on the others); embeddings only on
 * /v1/embeddings. `free`: count_tokens, for any LLM.
 */
function lookupModel(d: LlmDeps, body: Record<string, any>, path: string, free: boolean): LlmModel {
  const name = body.model;
  if (typeof name !== "string" || !name) throw new ApiError(400, "missing_model", "The request body needs a `model`. GET /v1/models lists them.", { param: "model" });
  const model = d.ctx.catalog.llm.get(name);
  if (!model) {
    const media = d.ctx.catalog.findMedia(name);
    if (media) {
      throw new ApiError(400, "wrong_endpoint", `Model ${media.id} makes ${media.type} as an asynchronous task: create it with POST ${ALIAS_PATH[media.type]} or POST /api/v1/jobs/createTask.`, { param: "model" });
    }
    throw new ApiError(404, "model_not_found", `Unknown model ${JSON.stringify(name)}. GET /v1/models lists the models and the endpoints serving each.`, { param: "model" });
  }
  d.ctx.catalog.servable(model);
  const embedding = model.endpoint === "/v1/embeddings";
  if (embedding !== (path === "/v1/embeddings") || (free && embedding)) {
    const where = embedding ? "POST /v1/embeddings" : "POST /v1/messages, /v1/responses or /v1/chat/completions";
    throw new ApiError(400, "wrong_endpoint", `Model ${model.id} is served on ${where}, not on ${path}.`, { param: "model" });
  }
  return model;
}

function queryOf(request: Request): string {
  const i = request.url.indexOf("?");
  return i === -1 ? "" : request.url.slice(i);
}

/** count_tokens: free, unmetered, passed through. */
async function forwardFree(ctx: AppContext, request: Request, url: string, provider: Provider, body: string | Uint8Array, baseHeaders: Record<string, string>) {
  let res: Response;
  try {
    res = await callUpstream(provider, url + queryOf(request), upstreamHeaders(request.headers, provider.name), body, request.signal);
  } catch (e) {
    if (request.signal.aborted) return new Response(null, { status: 499 }); // the client left: nothing to answer
    throw e;
  }
  throwIfGatewaySide(ctx, provider.name, res, baseHeaders["x-request-id"]!);
  return new Response(res.body, { status: res.status, headers: answerHeaders(res, baseHeaders) });
}

/** The headers of our answer: the upstream's content-type (and retry hints on errors), our ids and limits. */
export function answerHeaders(res: Response, base: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { ...base, "content-type": res.headers.get("content-type") ?? "application/json" };
  if (res.status >= 400) {
    for (const name of ["retry-after", "retry-after-ms", "x-should-retry"]) {
      const v = res.headers.get(name);
      if (v !== null) h[name] = v;
    }
  }
  return h;
}

async function forwardMetered(call: Call): Promise<Response> {
  const { proto, request } = call;
  const { body: upstreamBody, stripUsageChunk } = call.upstream!;
  // The client's own signal: Bun fires it the moment the client disconnects, which aborts the upstream request
  // (headers or body) at once (callUpstream). The pump listens to it only for answers that are pumped (pump.ts).
  const signal = request.signal;
  const { timeouts } = call.d;
  liftIdleTimeout(call.server, request); // the timeouts below govern until finish restores it
  let res: Response;
  try {
    res = await callUpstream(call.provider, call.url + queryOf(request), upstreamHeaders(request.headers, call.provider.name), upstreamBody, signal, timeouts);
  } catch (e) {
    return upstreamFailed(call, e);
  }
  if (!res.ok || !res.body) return upstreamError(call, res);

  const contentType = res.headers.get("content-type") ?? "";
  const sse = contentType.startsWith("text/event-stream");
  const misfit = answerTypeMisfit(proto.isStream(call.body), sse, contentType);
  if (misfit) unusableAnswer(call, res.status, contentType, misfit, () => res.body!.cancel());
  const status = res.status;
  const headers = answerHeaders(res, call.baseHeaders);
  let head: Head;
  try {
    head = sse ? await readArrived(res.body) : await readHead(res, WHOLE_ANSWER_BYTES, timeouts.silenceMs);
  } catch (e) {
    return answerUnread(call, e, status);
  }
  // A JSON answer too large to be read whole is forwarded before its end is seen: its first bytes at least.
  if (!sse && !head.ended && firstNonSpace(head.chunks) !== 0x7b /* { */) unusableAnswer(call, status, contentType, "not a JSON object", () => head.reader!.cancel());
  const tap = sse ? proto.createStreamTap({ stripUsageChunk }) : null;
  if (sse) headers["cache-control"] = "no-cache";
  if (tap) head.chunks = throughTap(tap, head.chunks, head.ended);
  // All of it is in already: answered in one piece (pump.ts says why); a stream that ended before its own end goes
  // through the pump, which adds the protocol's error event.
  if (head.ended && (!tap || tap.sawEnd())) {
    const verdict = meter(call, () => (tap ? judgeStream(tap.end(), "end", call.model, call.plan) : judgeAnswer(call, proto, textOf(head.chunks))));
    if (verdict.outcome === "upstream_bad_response") unusableAnswer(call, status, contentType, verdict.error!, null);
    finish(call, verdict, status, head.firstByteAt);
    return new Response(joined(head.chunks), { status, headers });
  }

  const collected: Uint8Array[] | null = sse ? null : head.chunks;
  // A long JSON answer is kept only as its tail; web searches it lists before that are counted on the way.
  const searches = !sse && call.plan.webSearch && proto.searchItemToken ? tokenCounter(proto.searchItemToken) : null;
  if (searches) for (const chunk of head.chunks) searches.feed(chunk);
  let firstByteAt = head.firstByteAt;
  // A long JSON answer's verdict, worked out once its end is in: an unusable one has its connection cut.
  let answered: Verdict | null = null;
  const judgeLongAnswer = () => (answered ??= judgeAnswer(call, proto, textOf(collected!), searches?.count, true));
  const body = pump(head, signal, {
    tap,
    collect: collected,
    watch: searches?.feed,
    dropNotice: sse ? dropNoticeFor(proto, call.requestId) : undefined,
    wholeBody: sse ? undefined : () => judgeLongAnswer().outcome !== "upstream_bad_response",
    silenceMs: timeouts.silenceMs,
    onFirstByte: () => (firstByteAt = performance.now()),
    onEnd(how: PumpEnd) {
      const verdict = meter(call, (): Verdict => {
        if (tap) return judgeStream(tap.end(), how, call.model, call.plan);
        if (how === "end") return judgeLongAnswer();
        if (how === "client_abort" || how === "shutdown") return partial(NOTHING_SEEN, call.model, call.plan, how);
        if (how === "timeout") return { outcome: "upstream_timeout", charge: null, usage: null, error: UPSTREAM_SILENT };
        return { outcome: "dropped", charge: null, usage: null, error: "upstream connection ended early" };
      });
      if (verdict.outcome === "upstream_bad_response") logUnusable(call, status, contentType, verdict.error);
      finish(call, verdict, status, firstByteAt);
    },
  });
  return new Response(body as any, { status, headers });
}

/**
 * Settle for a whole non-streaming answer (or the `tail` of a large one) in `proto`'s shape: its usage, else the
 * estimate from its content; nothing for one that is not a whole JSON object. `searchesSeen`: web searches counted
 * as a long answer passed (its tail may not show them).
 */
export function judgeAnswer(call: Pick<Call, "model" | "plan">, proto: LlmProtocol, text: string, searchesSeen = 0, tail = false): Verdict {
  const a = answerFacts(proto, text, call.plan.webSearch);
  if (!isWholeAnswer(text, a.usage !== null, tail)) return { outcome: "upstream_bad_response", charge: null, usage: null, error: "unusable upstream answer: not whole JSON" };
  if (!a.usage) return partial({ usage: null, outputCharsSoFar: a.outputChars, webSearchesSoFar: searchesSeen }, call.model, call.plan, "estimated");
  if (searchesSeen > (a.usage.webSearches ?? 0)) a.usage.webSearches = searchesSeen;
  return judgeBody(a.usage, call.model, call.plan);
}

const UPSTREAM_BROKE = "The upstream's connection broke before its answer was complete; nothing was charged. Retry the request.";

const SHUTTING_DOWN = "The gateway is restarting and ended this stream before its answer was complete; what you received is charged. Retry the request.";

const ENDED_EARLY = "The upstream ended its stream before the answer was complete; nothing was charged. Retry the request.";

/**
 * The event that ends a stream whose upstream dropped, or that the gateway's shutdown ended, in `proto`'s in-stream
 * error shape (pump.ts sends it).
 */
export function dropNoticeFor(proto: LlmProtocol, requestId: string): ((lastSent: Uint8Array | null, why: StreamCut) => Uint8Array) | undefined {
  const event = proto.droppedStreamEvent;
  if (!event) return undefined;
  const errors: Record<StreamCut, ErrorInfo> = {
    dropped: { status: 502, type: "server_error", code: "upstream_bad_response", message: UPSTREAM_BROKE, requestId },
    ended_early: { status: 502, type: "server_error", code: "upstream_bad_response", message: ENDED_EARLY, requestId },
    timeout: { status: 504, type: "server_error", code: "upstream_timeout", message: TIMED_OUT_MESSAGE, requestId },
    shutdown: { status: 503, type: "service_unavailable", code: "gateway_shutting_down", message: SHUTTING_DOWN, requestId },
  };
  return (lastSent, why) => new TextEncoder().encode(event(errors[why], lastSent));
}

const UNUSABLE = "The upstream's answer was not a usable response for this API; nothing was charged. Retry the request.";

/**
 * A 200 that is not the protocol's answer: released, logged with what the upstream sent (its status and content
 * type, never its body), and a 502 for the client. `cancel`: stops reading the upstream's body, if still open.
 */
export function unusableAnswer(call: Call, status: number, contentType: string, why: string, cancel: (() => Promise<void>) | null): never {
  cancel?.().catch(() => {});
  const error = why.startsWith("unusable upstream answer") ? why : `unusable upstream answer: ${why}`;
  logUnusable(call, status, contentType, error);
  finish(call, { outcome: "upstream_bad_response", charge: null, usage: null, error }, status, null);
  throw new ApiError(502, "upstream_bad_response", UNUSABLE);
}

function logUnusable(call: Call, status: number, contentType: string, error: string | undefined): void {
  const fields = { request_id: call.requestId, provider: call.model.provider, model: call.model.id, upstream_status: status, content_type: contentType.slice(0, 100), error };
  call.d.ctx.log.warn("llm upstream answer unusable; released", fields);
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
    finish(call, { outcome: "upstream_timeout", charge: null, usage: null, error: UPSTREAM_SILENT }, status, null);
    throw upstreamTimeoutError(call.provider.name);
  }
  finish(call, { outcome: "dropped", charge: null, usage: null, error }, status, null);
  throw new ApiError(502, "upstream_bad_response", message);
}

/**
 * The client left before anything went upstream (while its hold waited for a commit, say): nothing was sent, so
 * nothing is charged. fetch with a signal already aborted sends nothing either, but upstreamFailed cannot tell that
 * from a request the upstream had begun to read.
 */
function clientGoneBeforeUpstream(call: Call): Response {
  finish(call, { outcome: "client_abort", charge: null, usage: null, error: "client left before the request went upstream" }, null, null);
  return new Response(null, { status: 499 });
}

/** No answer from the upstream: the client left first (settle the input estimate) or it could not be reached. */
export function upstreamFailed(call: Call, e: unknown): Response {
  if (call.request.signal.aborted) {
    // The upstream may already have read the prompt: input estimate, no output, never above the hold.
    finish(call, partial(NOTHING_SEEN, call.model, call.plan, "client_abort"), null, null);
    return new Response(null, { status: 499 });
  }
  const timedOut = e instanceof ApiError && e.code === "upstream_timeout";
  finish(call, { outcome: timedOut ? "upstream_timeout" : "upstream_error", charge: null, usage: null, error: (e as Error).message }, null, null);
  throw e;
}

/**
 * An upstream error status: passed through as it came (body, content-type, retry hints); nothing charged. Except
 * the statuses about the gateway's side: its account with the provider, a redirecting base URL (throwIfGatewaySide).
 */
export function upstreamError(call: Call, res: Response): Response {
  finish(call, { outcome: "upstream_error", charge: null, usage: null, error: `upstream answered ${res.status}` }, res.status, performance.now());
  throwIfGatewaySide(call.d.ctx, call.provider.name, res, call.requestId);
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
  const s = res.status;
  const redirect = s >= 300 && s < 400;
  if (!redirect && s !== 401 && s !== 402 && s !== 403) return;
  void res.body?.cancel().catch(() => {});
  if (redirect) {
    ctx.log.warn("upstream answered a redirect; check its base URL setting", { provider, status: s, location: res.headers.get("location"), request_id: requestId });
    throw new ApiError(502, "upstream_bad_response", `The ${provider} upstream answered a redirect (status ${s}), which the gateway does not follow; nothing was charged. The operator has been told.`, {
      type: "service_unavailable",
    });
  }
  ctx.log.warn("upstream refused the gateway's account", { provider, status: s, request_id: requestId });
  const why = s === 402 ? "refused it for billing reasons on the gateway's account" : "refused the gateway's credentials";
  throw new ApiError(502, s === 402 ? "upstream_billing_failed" : "upstream_auth_failed", `The ${provider} upstream ${why} (status ${s}); nothing was charged. The operator has been told.`, {
    type: "service_unavailable",
  });
}

/** The verdict, always one: a defect in working it out releases the call (meter.ts verdictOr) and is logged. */
export function meter(call: Pick<Call, "d" | "requestId" | "plan">, judge: () => Verdict): Verdict {
  const v = verdictOr(judge, (error) => call.d.ctx.log.error("llm metering failed; call released", { request_id: call.requestId, error }));
  return capAtMaxCredits(v, call.plan);
}

/** Queue the settle/release and the usage record (records.ts commits them in groups). */
export function finish(
  call: Pick<Call, "d" | "hold" | "budgetHold" | "requestId" | "auth" | "model" | "path" | "started" | "finished" | "server"> & { request?: Request },
  v: Verdict,
  upstreamStatus: number | null,
  firstByteAt: number | null,
) {
  call.finished = true;
  if (call.budgetHold) call.d.budgets.settle(call.budgetHold, v.charge ?? 0);
  if (call.request) restoreIdleTimeout(call.server, call.request);
  const now = performance.now();
  if (upstreamStatus !== null && upstreamStatus >= 400) metrics.upstreamError(call.model.provider, `status_${Math.floor(upstreamStatus / 100)}xx`);
  else if (v.outcome === "failed" || v.outcome === "dropped" || v.outcome === "upstream_bad_response" || v.outcome === "upstream_timeout") {
    metrics.upstreamError(call.model.provider, v.outcome);
    const fields = { request_id: call.requestId, provider: call.model.provider, model: call.model.id, error: v.error };
    if (v.outcome === "dropped") call.d.ctx.log.warn("llm upstream answer ended early; released", fields);
    if (v.outcome === "upstream_timeout") call.d.ctx.log.warn("llm upstream timed out; released", fields);
  }
  call.d.ledger.finish({
    hold: call.hold,
    charge: v.charge,
    record: {
      requestId: call.requestId,
      accountId: call.auth.accountId,
      keyId: call.auth.keyId,
      model: call.model.id,
      endpoint: call.path,
      provider: call.model.provider,
      status: v.outcome,
      upstreamStatus,
      usage: v.usage,
      cost: v.charge ?? 0,
      latencyMs: Math.round(now - call.started),
      ttfbMs: firstByteAt === null ? null : Math.round(firstByteAt - call.started),
      error: v.error ?? null,
      endedAt: Date.now(),
    },
  });
}
