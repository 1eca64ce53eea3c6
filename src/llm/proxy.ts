// The LLM proxy: one piece of code for every protocol (the protocol module answers the questions that differ).
//   body's top-level fields → model (model-lookup.ts) → reservation → upstream (key rotation) → answer streamed back
//   as it arrives, the tap on the side (native.ts, or translated.ts) → post or void + usage record, queued off the
//   response path (call.ts endCall).
// Errors the gateway raises itself are thrown as ApiError and shaped per path by http/base.ts.

import type { AuthContext } from "../accounts/service";
import { refuseModelNotAllowed } from "../accounts/policy";
import { withCreditHint } from "./credit-hint";
import type { Reservation } from "../ledger/float";
import type { LlmModel } from "../catalog/model";
import { modelAt } from "../catalog/peak";
import type { LlmProtocol, UpstreamBody } from "./protocols/index";
import { NO_PAID_TOOLS, paidToolUse, type PaidToolUse, withoutUnpricedTools } from "./protocols/paid-tools";
import { spokenPath, type Provider } from "./providers";
import { requestBodyOf, withoutBom, withUpstreamModel } from "./body";
import { capAtHold, checkMaxCredits, planHold, type HoldPlan, type Verdict } from "./meter";
import { bodyBytes } from "../http/body-limits";
import { forwardTranslated, prepareTranslation, type Translation } from "./translated";
import { countTokensEstimate, forwardCountTokens } from "./count-tokens";
import { withoutForeignReasoning } from "./foreign-reasoning";
import { reserialised } from "./protocols/common";
import type { IdleTimeouts } from "./timeouts";
import type { Call, LlmDeps } from "./call";
import type { BudgetHold } from "../accounts/key-budgets";
import { clientGoneBeforeUpstream, voidLeftOpen } from "./call-failures";
import { lookupModel, reachable } from "./model-lookup";
import { forwardNative } from "./native";

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
  onEnd?: (verdict: Verdict) => void,
): Promise<Response> {
  const started = performance.now();
  const bytes = withoutBom(await bodyBytes(request, deps.ctx.config.body));
  const body = requestBodyOf(bytes);
  const unmetered = proto.unmeteredPaths.includes(path);
  const model = lookupModel(deps, body, path, unmetered);
  refuseModelNotAllowed(auth.models, body.model, model);
  const provider = deps.providers.get(model.provider);
  // How the call is forwarded: passed through when the provider speaks the protocol called, else translated.
  const spoken = provider ? spokenPath(provider, model.endpoint) : model.endpoint;
  // count_tokens exists only in Anthropic's protocol: for a model spoken to in another, an estimate (count-tokens.ts).
  if (unmetered && spoken !== "/v1/messages") return countTokensEstimate(proto, body, bytes, model, baseHeaders);
  const url = reachable(model, provider, provider?.urls.get(unmetered ? path : spoken), path);
  if (unmetered) {
    const upstreamBody = upstreamRequestOf(proto, body, bytes, model).body;
    return forwardCountTokens(deps.ctx, request, url, provider!, upstreamBody, baseHeaders);
  }
  const reserving = reserve(
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
  const call = reserving instanceof Promise ? await reserving : reserving; // the free path: no wait (reserve)
  if (onEnd) call.onEnd = onEnd;
  // The reservation may have waited for a commit; a client gone meanwhile is voided here, before either path sends.
  if (request.signal.aborted) return clientGoneBeforeUpstream(call);
  try {
    return await (call.translation ? forwardTranslated(call) : forwardNative(call));
  } catch (e) {
    // Every path ends its call before it throws; should one not, the reservation must not stay held.
    voidLeftOpen(call, e);
    throw e;
  }
}

/**
 * Everything decided before anything goes upstream (`prepare`), then the money held (`holdFunds`); the call is built
 * when the hold is granted, at the prices of that moment.
 */
function reserve(
  deps: LlmDeps,
  proto: LlmProtocol,
  path: string,
  request: Request,
  auth: AuthContext,
  baseHeaders: Record<string, string>,
  routed: Routed,
  started: number,
  server?: IdleTimeouts | null,
): Call | Promise<Call> {
  const { body, model, provider, url } = routed;
  const requestId = baseHeaders["x-request-id"]!;
  const { translation, plan, upstream } = prepare(deps, proto, path, routed, requestId);
  const callOf = (hold: Reservation, budgetHold: BudgetHold | null): Call => ({
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
    // Held at the peak price; billed at the price of the period it goes upstream in, which is now.
    model: modelAt(model, (deps.ctx.clock ?? Date.now)()),
    provider,
    url,
    plan,
    hold,
    budgetHold,
    started,
    ended: false,
    server,
    onEnd: null,
  });
  const refused = (e: unknown) =>
    withCreditHint(e, proto.name, model.provider, body, plan, proto.maxOutputTokens(body));
  return holdFunds(deps, auth, plan, requestId, callOf, refused);
}

/** What a call will send and the most it may cost, worked out before any hold: a refusal here holds nothing. */
function prepare(
  deps: LlmDeps,
  proto: LlmProtocol,
  path: string,
  routed: Routed,
  requestId: string,
): { translation: Translation | null; plan: HoldPlan; upstream: UpstreamBody | null } {
  const { body, bytes, model, provider, spoken } = routed;
  proto.refuseUnmeterable?.(body);
  // Decoded and encoded before the reservation: a request that cannot be translated is refused at once.
  const translation =
    spoken === path
      ? null
      : prepareTranslation(path, spoken, body, model, provider, (msg, fields) =>
          deps.ctx.log.warn(msg, { ...fields, request_id: requestId }),
        );
  // A translated call's hosted tools never reach the upstream (the codecs leave them out): no fees.
  const paid = translation || !proto.paidTools ? NO_PAID_TOOLS : paidToolUse(proto.paidTools, body, model);
  const plan = holdPlanOf(proto, body, bytes, model, translation, paid);
  const upstream = translation ? null : upstreamRequestOf(proto, body, bytes, model, paid);
  return { translation, plan, upstream };
}

/**
 * The key's budget (402 key_budget_exceeded), then the wallet's reservation; a wallet that refuses gives the budget
 * back and its error goes through `refused`. A budgeted key's call is charged at most its hold (meter.ts capAtHold). A call on the free path (no key budget, the wallet's float covers it:
 * llm-ledger.ts) is held at once, with no promise to wait for: each is a turn of the microtask queue on every call's
 * way (docs/architecture.md).
 */
function holdFunds(
  deps: LlmDeps,
  auth: AuthContext,
  plan: HoldPlan,
  requestId: string,
  callOf: (hold: Reservation, budgetHold: BudgetHold | null) => Call,
  refused: (e: unknown) => unknown,
): Call | Promise<Call> {
  const holdWallet = (budgetHold: BudgetHold | null): Call | Promise<Call> => {
    const holding = deps.ledger.hold(auth.accountId, plan.amount, requestId);
    if (Bun.peek.status(holding) === "fulfilled") return callOf(Bun.peek(holding) as Reservation, budgetHold);
    return holding.then(
      (hold) => callOf(hold, budgetHold),
      (e) => {
        if (budgetHold) deps.budgets.post(budgetHold, 0);
        throw refused(e);
      },
    );
  };
  const budgetPending = deps.budgets.hold(auth, plan.amount);
  if (budgetPending) capAtHold(plan);
  return budgetPending ? budgetPending.then(holdWallet) : holdWallet(null);
}

/** The reservation's size (meter.ts planHold), capped by the request's max_credits. */
function holdPlanOf(
  proto: LlmProtocol,
  body: Record<string, any>,
  bytes: Uint8Array,
  model: LlmModel,
  translation: Translation | null,
  paid: PaidToolUse,
): HoldPlan {
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
  paid: PaidToolUse = NO_PAID_TOOLS,
): UpstreamBody {
  let own = withoutForeignReasoning(proto.name, body, model.provider, model.upstream_model);
  if (paid.unpriced) own = withoutUnpricedTools(own ?? body, paid);
  if (own) {
    body = own;
    bytes = Buffer.from(reserialised(own));
  }
  const prepared = proto.prepareUpstreamBody(body, bytes);
  if (paid.unpriced) prepared.droppedTools = paid.unpriced;
  if (body.model === model.upstream_model) return prepared;
  return { ...prepared, body: withUpstreamModel(prepared.body, body.model, model.upstream_model) };
}
