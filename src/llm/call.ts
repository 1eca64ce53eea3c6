// One metered LLM call, shared by the native path (native.ts) and the translated one (translated.ts): what it
// needs, its verdict (meter.ts decides; a defect there voids the reservation), and its end, which queues the
// reservation's post or void and the usage record (records.ts commits them in groups).

import { metrics } from "../ops/metrics";
import type { AppContext } from "../context";
import type { AuthContext } from "../accounts/service";
import type { BudgetHold, KeyBudgets } from "../accounts/key-budgets";
import type { Reservation } from "../ledger/float";
import type { LlmModel } from "../catalog/model";
import type { LlmProtocol, UpstreamBody } from "./protocols/index";
import type { Provider, Providers } from "./providers";
import type { LlmLedger } from "../ledger/llm-ledger";
import type { Finish } from "./records";
import type { Translation } from "./translated";
import { answerFacts, isWholeAnswer } from "./body";
import { capAtMaxCredits, estimateVerdict, usageVerdict, verdictOr, type HoldPlan, type Verdict } from "./meter";
import { restoreIdleTimeout, type IdleTimeouts, type LlmTimeouts } from "./timeouts";

export interface LlmDeps {
  ctx: AppContext;
  providers: Providers;
  ledger: LlmLedger<Finish>;
  /** key budgets (accounts/key-budgets.ts): a hold beside the wallet's for a key with a budget */
  budgets: KeyBudgets;
  /** how long an upstream may keep a call waiting (timeouts.ts) */
  timeouts: LlmTimeouts;
}

/** Everything about one metered call, shared by the plain proxy and the translating one. */
export interface Call {
  deps: LlmDeps;
  proto: LlmProtocol;
  path: string;
  request: Request;
  auth: AuthContext;
  requestId: string;
  /** headers every answer carries: request ids, rate-limit state */
  baseHeaders: Record<string, string>;
  body: Record<string, any>;
  /** what goes upstream (proxy.ts upstreamRequestOf); null on a translated call */
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
  /** set by endCall: the call's reservation is queued to be posted or voided */
  ended: boolean;
  /** Bun's server, whose idle timeout is lifted for the call's connection while it runs (timeouts.ts) */
  server?: IdleTimeouts | null;
  /** told the verdict by endCall: an Idempotency-Key follows the call's end (idempotent.ts); null for most calls */
  onEnd: ((verdict: Verdict) => void) | null;
}

/**
 * The verdict on a whole non-streaming answer (or the `tail` of a large one) in `proto`'s shape: its usage, else
 * the estimate from its content; a void for one that is not a whole JSON object. `searchesSeen`: web searches
 * counted as a long answer passed (its tail may not show them).
 */
export function answerVerdict(
  call: Pick<Call, "model" | "plan">,
  proto: LlmProtocol,
  text: string,
  searchesSeen = 0,
  tail = false,
): Verdict {
  const facts = answerFacts(proto, text, call.plan.webSearch);
  if (!isWholeAnswer(text, facts.usage !== null, tail))
    return {
      outcome: "upstream_bad_response",
      charge: null,
      usage: null,
      error: "unusable upstream answer: not whole JSON",
    };
  if (!facts.usage)
    return estimateVerdict(
      { usage: null, outputCharsSoFar: facts.outputChars, webSearchesSoFar: searchesSeen },
      call.model,
      call.plan,
      "estimated",
    );
  if (searchesSeen > (facts.usage.webSearches ?? 0)) facts.usage.webSearches = searchesSeen;
  return usageVerdict(facts.usage, call.model, call.plan);
}

/** The call's verdict, always one: a defect in working it out voids the call (meter.ts verdictOr) and is logged. */
export function callVerdict(call: Pick<Call, "deps" | "requestId" | "plan">, judge: () => Verdict): Verdict {
  const verdict = verdictOr(judge, (error) =>
    call.deps.ctx.log.error("llm metering failed; call released", { request_id: call.requestId, error }),
  );
  return capAtMaxCredits(verdict, call.plan);
}

type Ending = Pick<
  Call,
  "deps" | "hold" | "budgetHold" | "requestId" | "auth" | "model" | "path" | "started" | "ended" | "server" | "onEnd"
> & { request?: Request };

const UPSTREAM_FAULTS = new Set(["failed", "dropped", "upstream_bad_response", "upstream_timeout"]);

/** Ends the call: queues its post or void and its usage record (records.ts commits them in groups). */
export function endCall(
  call: Ending,
  verdict: Verdict,
  upstreamStatus: number | null,
  firstByteAt: number | null,
): void {
  call.ended = true;
  if (call.budgetHold) call.deps.budgets.post(call.budgetHold, verdict.charge ?? 0);
  if (call.request) restoreIdleTimeout(call.server, call.request);
  const now = performance.now();
  if (upstreamStatus !== null && upstreamStatus >= 400)
    metrics.upstreamError(call.model.provider, `status_${Math.floor(upstreamStatus / 100)}xx`);
  else if (UPSTREAM_FAULTS.has(verdict.outcome)) {
    metrics.upstreamError(call.model.provider, verdict.outcome);
    const fields = {
      request_id: call.requestId,
      provider: call.model.provider,
      model: call.model.id,
      error: verdict.error,
    };
    if (verdict.outcome === "dropped") call.deps.ctx.log.warn("llm upstream answer ended early; released", fields);
    if (verdict.outcome === "upstream_timeout") call.deps.ctx.log.warn("llm upstream timed out; released", fields);
  }
  call.deps.ledger.postOrVoid({
    hold: call.hold,
    charge: verdict.charge,
    record: {
      requestId: call.requestId,
      accountId: call.auth.accountId,
      keyId: call.auth.keyId,
      model: call.model.id,
      endpoint: call.path,
      provider: call.model.provider,
      status: verdict.outcome,
      upstreamStatus,
      usage: verdict.usage,
      cost: verdict.charge ?? 0,
      latencyMs: Math.round(now - call.started),
      ttfbMs: firstByteAt === null ? null : Math.round(firstByteAt - call.started),
      error: verdict.error ?? null,
      endedAt: Date.now(),
    },
  });
  call.onEnd?.(verdict);
}
