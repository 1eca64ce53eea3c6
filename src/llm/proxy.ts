// The LLM proxy: one piece of code for every protocol (the protocol module answers the questions that differ).
//   body's top-level fields → model → reservation → upstream (key rotation) → answer streamed back as it arrives,
//   the tap on the side → post or void + usage record, queued off the response path (call.ts endCall).
// Errors the gateway raises itself are thrown as ApiError and shaped per path by http/base.ts.

import type { AuthContext } from "../accounts/service";
import { refuseModelNotAllowed } from "../accounts/policy";
import { withCreditHint } from "./credit-hint";
import type { Reservation } from "../ledger/float";
import type { LlmModel } from "../catalog/model";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { ALIAS_PATH } from "../catalog/endpoints";
import type { LlmProtocol, UpstreamBody } from "./protocols/index";
import { NO_PAID_TOOLS, paidToolUse } from "./protocols/paid-tools";
import { keySettingOf, spokenPath, type Provider } from "./providers";
import { callUpstream, upstreamHeaders } from "./upstream";
import { answerTypeMisfit, firstNonSpace, requestBodyOf, textOf, withoutBom, withUpstreamModel } from "./body";
import {
  checkMaxCredits,
  estimateVerdict,
  NOTHING_SEEN,
  planHold,
  streamVerdict,
  UPSTREAM_SILENT,
  type HoldPlan,
  type Verdict,
} from "./meter";
import { pump, throughTap, type PumpEnd } from "./pump";
import { readArrived, readHead, WHOLE_ANSWER_BYTES, type Head } from "./answer-head";
import { joined, tokenCounter } from "./bytes";
import { bodyBytes } from "../http/body-limits";
import { forwardTranslated, prepareTranslation, type Translation } from "./translated";
import { countTokensEstimate } from "./count-tokens";
import { withoutForeignReasoning } from "./foreign-reasoning";
import { reserialised } from "./protocols/common";
import { liftIdleTimeout, type IdleTimeouts } from "./timeouts";
import { answerVerdict, callVerdict, endCall, type Call, type LlmDeps } from "./call";
import {
  answerHeaders,
  answerUnread,
  clientGoneBeforeUpstream,
  dropNoticeFor,
  logUnusable,
  throwIfGatewaySide,
  unusableAnswer,
  upstreamError,
  upstreamFailed,
} from "./call-failures";

export type { Call, LlmDeps } from "./call";

/** What a request asks for, read before anything is reserved: its model, where it goes and how. */
interface Routed {
  body: Record<string, any>;
  bytes: Uint8Array;
  model: LlmModel;
  provider: Provider;
  url: string;
  /** the path the provider speaks for the model: the path called (passed through) or another (translated) */
  spoken: string;
}

export async function handleLlm(
  deps: LlmDeps,
  proto: LlmProtocol,
  path: string,
  request: Request,
  auth: AuthContext,
  baseHeaders: Record<string, string>,
  server?: IdleTimeouts | null,
): Promise<Response> {
  const started = performance.now();
  const bytes = withoutBom(await bodyBytes(request, deps.ctx.config.body));
  const body = requestBodyOf(bytes);
  const free = proto.freePaths.includes(path);
  const model = lookupModel(deps, body, path, free);
  refuseModelNotAllowed(auth.models, body.model, model.id);
  const provider = deps.providers.get(model.provider);
  // How the call is forwarded: passed through when the provider speaks the protocol called, else translated.
  const spoken = provider ? spokenPath(provider, model.endpoint) : model.endpoint;
  // count_tokens exists only in Anthropic's protocol: for a model spoken to in another, an estimate (count-tokens.ts).
  if (free && spoken !== "/v1/messages") return countTokensEstimate(proto, body, bytes, model, baseHeaders);
  const url = reachable(model, provider, provider?.urls.get(free ? path : spoken), path);
  if (free)
    return forwardFree(
      deps.ctx,
      request,
      url,
      provider!,
      upstreamRequestOf(proto, body, bytes, model).body,
      baseHeaders,
    );
  const call = await reserve(
    deps,
    proto,
    path,
    request,
    auth,
    baseHeaders,
    { body, bytes, model, provider: provider!, url, spoken },
    started,
    server,
  );
  // The reservation may have waited for a commit; a client gone meanwhile is voided here, before either path sends.
  if (request.signal.aborted) return clientGoneBeforeUpstream(call);
  try {
    return await (call.translation ? forwardTranslated(call) : forwardMetered(call));
  } catch (e) {
    // Every path above ends the call before it throws; should one not, the reservation must not stay held.
    if (!call.ended)
      endCall(
        call,
        {
          outcome: "failed",
          charge: null,
          usage: null,
          error: `gateway error; released: ${(e as Error)?.message ?? e}`,
        },
        null,
        null,
      );
    throw e;
  }
}

/** The provider's URL for the call, or the caller's 501 / 503 when the gateway cannot reach the model. */
function reachable(model: LlmModel, provider: Provider | undefined, url: string | undefined, path: string): string {
  if (!provider || !url)
    throw new ApiError(
      501,
      "provider_not_supported",
      `Model ${model.id} is served by ${model.provider}, which this gateway cannot reach on ${path}.`,
    );
  if (provider.auth.length === 0) {
    throw new ApiError(
      503,
      "provider_not_configured",
      `Model ${model.id} is unavailable: its provider (${model.provider}) has no API key configured on this gateway (${keySettingOf(model.provider)}).`,
      {
        type: "service_unavailable",
      },
    );
  }
  return url;
}

/**
 * Everything decided before anything goes upstream (a refusal here holds nothing and sends nothing), then the
 * key's budget (402 key_budget_exceeded) and the wallet's reservation; a wallet that refuses gives the budget back.
 */
async function reserve(
  deps: LlmDeps,
  proto: LlmProtocol,
  path: string,
  request: Request,
  auth: AuthContext,
  baseHeaders: Record<string, string>,
  routed: Routed,
  started: number,
  server?: IdleTimeouts | null,
): Promise<Call> {
  const { body, bytes, model, provider, url, spoken } = routed;
  const requestId = baseHeaders["x-request-id"]!;
  proto.refuseUnmeterable?.(body);
  // Decoded and encoded before the reservation: a request that cannot be translated is refused at once.
  const translation =
    spoken === path
      ? null
      : prepareTranslation(path, spoken, body, model, provider, (msg, fields) =>
          deps.ctx.log.warn(msg, { ...fields, request_id: requestId }),
        );
  const plan = holdPlanOf(proto, body, bytes, model, translation);
  const upstream = translation ? null : upstreamRequestOf(proto, body, bytes, model);
  const budgetPending = deps.budgets.hold(auth, plan.amount);
  const budgetHold = budgetPending && (await budgetPending);
  let hold: Reservation;
  try {
    hold = await deps.ledger.hold(auth.accountId, plan.amount, requestId);
  } catch (e) {
    if (budgetHold) deps.budgets.post(budgetHold, 0);
    throw withCreditHint(e, proto.name, body, plan, proto.maxOutputTokens(body));
  }
  return {
    deps,
    proto,
    path,
    request,
    auth,
    requestId,
    baseHeaders,
    body,
    upstream,
    translation,
    model,
    provider,
    url,
    plan,
    hold,
    budgetHold,
    started,
    ended: false,
    server,
  };
}

/** The reservation's size (meter.ts planHold), capped by the request's max_credits. */
function holdPlanOf(
  proto: LlmProtocol,
  body: Record<string, any>,
  bytes: Uint8Array,
  model: LlmModel,
  translation: Translation | null,
): HoldPlan {
  // A translated call's hosted tools never reach the upstream (the codecs refuse them): no fees.
  const paid = translation || !proto.paidTools ? NO_PAID_TOOLS : paidToolUse(proto.paidTools, body, model);
  // The input estimate takes the larger of the client's bytes and the translated ones.
  const inputBytes = translation ? Math.max(bytes.byteLength, Buffer.byteLength(translation.text)) : bytes.byteLength;
  const plan = planHold(proto, body, inputBytes, model, paid);
  plan.cap = checkMaxCredits(body, plan.amount);
  return plan;
}

/**
 * What goes upstream, worked out before any hold: the client's bytes as they came; chat streams' include_usage and
 * the upstream's name for the model spliced into a copy of them; re-serialised text only when max_credits must go
 * or a splice cannot be trusted (bytes spare encoding a long body again). A body that cannot be serialised again
 * (protocols/common.ts reserialised) is refused here, before any hold.
 */
function upstreamRequestOf(
  proto: LlmProtocol,
  body: Record<string, any>,
  bytes: Uint8Array,
  model: LlmModel,
): UpstreamBody {
  const own = withoutForeignReasoning(proto.name, body, model.provider, model.upstream_model);
  if (own) {
    body = own;
    bytes = Buffer.from(reserialised(own));
  }
  const prepared = proto.prepareUpstreamBody(body, bytes);
  if (body.model === model.upstream_model) return prepared;
  return {
    body: withUpstreamModel(prepared.body, body.model, model.upstream_model),
    stripUsageChunk: prepared.stripUsageChunk,
  };
}

/**
 * Every LLM is served on the three LLM paths (natively on one, translated on the others); embeddings only on
 * /v1/embeddings. `free`: count_tokens, for any LLM.
 */
function lookupModel(deps: LlmDeps, body: Record<string, any>, path: string, free: boolean): LlmModel {
  const name = body.model;
  if (typeof name !== "string" || !name)
    throw new ApiError(400, "missing_model", "The request body needs a `model`. GET /v1/models lists them.", {
      param: "model",
    });
  const model = deps.ctx.catalog.llm.get(name);
  if (!model) {
    const media = deps.ctx.catalog.findMedia(name);
    if (media) {
      throw new ApiError(
        400,
        "wrong_endpoint",
        `Model ${media.id} makes ${media.type} as an asynchronous task: create it with POST ${ALIAS_PATH[media.type]} or POST /api/v1/jobs/createTask.`,
        { param: "model" },
      );
    }
    throw new ApiError(
      404,
      "model_not_found",
      `Unknown model ${JSON.stringify(name)}. GET /v1/models lists the models and the endpoints serving each.`,
      { param: "model" },
    );
  }
  deps.ctx.catalog.servable(model);
  const embedding = model.endpoint === "/v1/embeddings";
  if (embedding !== (path === "/v1/embeddings") || (free && embedding)) {
    const where = embedding ? "POST /v1/embeddings" : "POST /v1/messages, /v1/responses or /v1/chat/completions";
    throw new ApiError(400, "wrong_endpoint", `Model ${model.id} is served on ${where}, not on ${path}.`, {
      param: "model",
    });
  }
  return model;
}

function queryOf(request: Request): string {
  const i = request.url.indexOf("?");
  return i === -1 ? "" : request.url.slice(i);
}

/** count_tokens: free, unmetered, passed through. */
async function forwardFree(
  ctx: AppContext,
  request: Request,
  url: string,
  provider: Provider,
  body: string | Uint8Array,
  baseHeaders: Record<string, string>,
) {
  let res: Response;
  try {
    res = await callUpstream(
      provider,
      url + queryOf(request),
      upstreamHeaders(request.headers, provider.name),
      body,
      request.signal,
    );
  } catch (e) {
    if (request.signal.aborted) return new Response(null, { status: 499 }); // the client left: nothing to answer
    throw e;
  }
  throwIfGatewaySide(ctx, provider.name, res, baseHeaders["x-request-id"]!);
  return new Response(res.body, { status: res.status, headers: answerHeaders(res, baseHeaders) });
}

async function forwardMetered(call: Call): Promise<Response> {
  const { proto, request } = call;
  const { body: upstreamBody } = call.upstream!;
  // The client's own signal: Bun fires it the moment the client disconnects, which aborts the upstream request
  // (headers or body) at once (callUpstream). The pump listens to it only for answers that are pumped (pump.ts).
  liftIdleTimeout(call.server, request); // the timeouts below govern until endCall restores it
  let res: Response;
  try {
    res = await callUpstream(
      call.provider,
      call.url + queryOf(request),
      upstreamHeaders(request.headers, call.provider.name),
      upstreamBody,
      request.signal,
      call.deps.timeouts,
    );
  } catch (e) {
    return upstreamFailed(call, e);
  }
  if (!res.ok || !res.body) return upstreamError(call, res);
  const contentType = res.headers.get("content-type") ?? "";
  const sse = contentType.startsWith("text/event-stream");
  const misfit = answerTypeMisfit(proto.isStream(call.body), sse, contentType);
  if (misfit) unusableAnswer(call, res.status, contentType, misfit, () => res.body!.cancel());
  const status = res.status;
  let head: Head;
  try {
    head = sse ? await readArrived(res.body) : await readHead(res, WHOLE_ANSWER_BYTES, call.deps.timeouts.silenceMs);
  } catch (e) {
    return answerUnread(call, e, status);
  }
  const answer: Answer = { status, contentType, sse, headers: answerHeaders(res, call.baseHeaders), head };
  // A JSON answer too large to be read whole is forwarded before its end is seen: its first bytes at least.
  if (!sse && !head.ended && firstNonSpace(head.chunks) !== 0x7b /* { */)
    unusableAnswer(call, status, contentType, "not a JSON object", () => head.reader!.cancel());
  const tap = sse ? proto.createStreamTap({ stripUsageChunk: call.upstream!.stripUsageChunk }) : null;
  if (sse) answer.headers["cache-control"] = "no-cache";
  if (tap) head.chunks = throughTap(tap, head.chunks, head.ended);
  // All of it is in already: answered in one piece (pump.ts says why); a stream that ended before its own end goes
  // through the pump, which adds the protocol's error event.
  if (head.ended && (!tap || tap.sawEnd())) return answerWhole(call, answer, tap);
  return answerPumped(call, answer, tap);
}

/** An upstream answer as far as it has been read: its status, our headers for it, its first chunks. */
interface Answer {
  status: number;
  contentType: string;
  sse: boolean;
  headers: Record<string, string>;
  head: Head;
}

type Tap = ReturnType<LlmProtocol["createStreamTap"]>;

/** The whole answer is in: metered now, and answered in one piece with a content-length. */
function answerWhole(call: Call, answer: Answer, tap: Tap | null): Response {
  const { head, status } = answer;
  const verdict = callVerdict(call, () =>
    tap ? streamVerdict(tap.end(), "end", call.model, call.plan) : answerVerdict(call, call.proto, textOf(head.chunks)),
  );
  if (verdict.outcome === "upstream_bad_response")
    unusableAnswer(call, status, answer.contentType, verdict.error!, null);
  endCall(call, verdict, status, head.firstByteAt);
  return new Response(joined(head.chunks), { status, headers: answer.headers });
}

/** The answer is still arriving: pumped to the client as it comes, metered when it ends (however it ends). */
function answerPumped(call: Call, answer: Answer, tap: Tap | null): Response {
  const { proto } = call;
  const { head, status, sse } = answer;
  const collected: Uint8Array[] | null = sse ? null : head.chunks;
  // A long JSON answer is kept only as its tail; web searches it lists before that are counted on the way.
  const searches = !sse && call.plan.webSearch && proto.searchItemToken ? tokenCounter(proto.searchItemToken) : null;
  if (searches) for (const chunk of head.chunks) searches.feed(chunk);
  let firstByteAt = head.firstByteAt;
  // A long JSON answer's verdict, worked out once its end is in: an unusable one has its connection cut.
  let longVerdict: Verdict | null = null;
  const judgeLongAnswer = () => (longVerdict ??= answerVerdict(call, proto, textOf(collected!), searches?.count, true));
  const body = pump(head, call.request.signal, {
    tap,
    collect: collected,
    watch: searches?.feed,
    dropNotice: sse ? dropNoticeFor(proto, call.requestId) : undefined,
    wholeBody: sse ? undefined : () => judgeLongAnswer().outcome !== "upstream_bad_response",
    silenceMs: call.deps.timeouts.silenceMs,
    onFirstByte: () => (firstByteAt = performance.now()),
    onEnd(how: PumpEnd) {
      const verdict = callVerdict(call, () =>
        tap ? streamVerdict(tap.end(), how, call.model, call.plan) : pumpedBodyVerdict(call, how, judgeLongAnswer),
      );
      if (verdict.outcome === "upstream_bad_response") logUnusable(call, status, answer.contentType, verdict.error);
      endCall(call, verdict, status, firstByteAt);
    },
  });
  return new Response(body as any, { status, headers: answer.headers });
}

/** A pumped JSON answer's verdict by how its pump ended. */
function pumpedBodyVerdict(call: Call, how: PumpEnd, judgeLongAnswer: () => Verdict): Verdict {
  if (how === "end") return judgeLongAnswer();
  if (how === "client_abort" || how === "shutdown") return estimateVerdict(NOTHING_SEEN, call.model, call.plan, how);
  if (how === "timeout") return { outcome: "upstream_timeout", charge: null, usage: null, error: UPSTREAM_SILENT };
  return { outcome: "dropped", charge: null, usage: null, error: "upstream connection ended early" };
}
