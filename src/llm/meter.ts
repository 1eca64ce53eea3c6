// Metering rules of the LLM routes, in one place (the README's "Metering" section describes the same): the hold
// (input estimate plus the most output the request allows), what is refused before it (protocols/paid-tools.ts),
// the settle (priceUsage of the stated usage, never above the request's max_credits), the release (upstream errors,
// failures, drops, early ends, timeouts), and a client abort (input plus output so far, never above the hold).

import { ApiError } from "../http/errors";
import { maxCreditsToMicros, microsToCredits } from "../ledger/units";
import type { LlmModel } from "../catalog/model";
import { chargeUsage, partialUsage, pricesFor, type TokenUsage } from "./usage";
import type { LlmProtocol, TapResult } from "./protocols/index";
import type { PaidToolUse } from "./protocols/paid-tools";
import type { PumpEnd } from "./pump";
import { IMAGE_INPUT_TOKENS, SEARCH_INPUT_TOKENS } from "./protocols/unseen-input";

// Input estimate: ceil(body bytes / 3) tokens. English runs near 4 characters per token and JSON adds more, so /3
// over-reserves; CJK runs near one token per 3-byte character. A hold only has to cover the charge: the unused part
// goes back at settle. Input the body does not show holds more (protocols/unseen-input.ts).
export const INPUT_BYTES_PER_TOKEN = 3;
/** Output to hold for a model that states no maximum (none in the built-in catalog does so for chat models). */
export const FALLBACK_MAX_OUTPUT = 4096;

export interface HoldPlan {
  amount: number;
  /** input tokens held for: the estimate, or the context window for input the body does not show in full */
  inputTokens: number;
  /** the input estimate itself (the body's bytes and the allowances for images and searches): what an answer that
   *  states no usage is charged for input, never the context window held for a document that may be small */
  inputEstimate: number;
  outputTokens: number;
  /** µcr per output token (what each token of max_tokens adds to the hold) and the choices each may produce */
  outputPrice: number;
  /** µcr per input token held (what each token of a longer body adds to the hold) */
  inputPrice: number;
  choices: number;
  /** the request offers a priced web search: a JSON answer is read whole for its search count */
  webSearch: boolean;
  /** the most the call is charged, whatever the upstream states (µcr): the request's max_credits (checkMaxCredits),
   *  or the hold itself for a key with a budget (capAtHold) */
  cap?: number;
  /** what set `cap`, for the usage record; absent: max_credits */
  capReason?: string;
}

// Max output: the request's limit (max_tokens, max_output_tokens, max_completion_tokens) capped at the model's
// maximum (the maximum when absent), × n; plus, for a priced web-search tool, its search limit (else 5) × price.
/** `bodyBytes`: the request body's size in bytes (UTF-8, as it came), the input estimate's basis. */
export function planHold(
  proto: LlmProtocol,
  body: any,
  bodyBytes: number,
  model: LlmModel,
  paid: PaidToolUse,
): HoldPlan {
  const fromBody = Math.max(
    Math.ceil((bodyBytes - maxCreditsFieldBytes(body)) / INPUT_BYTES_PER_TOKEN),
    proto.statedInputTokens?.(body) ?? 0,
  );
  const unseenInput = proto.unseenInput?.(body);
  // Input the body does not show (unseen-input.ts): a document the upstream fetches may fill the context window.
  const seen = fromBody + (unseenInput?.images ?? 0) * IMAGE_INPUT_TOKENS + paid.heldSearches * SEARCH_INPUT_TOKENS;
  const inputTokens = unseenInput?.unbounded ? Math.max(seen, model.context_window ?? seen) : seen;
  const requested = proto.maxOutputTokens(body);
  const modelMax = model.max_output_tokens ?? (model.type === "embedding" ? 0 : FALLBACK_MAX_OUTPUT);
  const perChoice =
    requested === undefined ? modelMax : model.max_output_tokens ? Math.min(requested, modelMax) : requested;
  // The model's maximum is per answer: n choices may each produce that much (and are each billed).
  const choices = proto.choices?.(body) ?? 1;
  const outputTokens = perChoice * choices;
  const prices = pricesFor(model.prices, inputTokens);
  const inputPrice = Math.max(prices.input, prices.cacheWrite, prices.cacheWrite1h);
  const amount = inputTokens * inputPrice + outputTokens * prices.output + paid.heldSearches * (prices.webSearch ?? 0);
  if (!Number.isSafeInteger(amount)) throw new ApiError(400, "request_too_large", "The request is too large to price.");
  return {
    amount,
    inputTokens,
    inputEstimate: seen,
    outputTokens,
    outputPrice: prices.output,
    inputPrice,
    choices,
    webSearch: paid.webSearch,
  };
}

/**
 * The bytes of `"max_credits":<value>,` in the body, which is removed before the body goes upstream: not input, and
 * counting it would make the 402 that quotes the hold quote a figure the same request with that max_credits exceeds.
 */
function maxCreditsFieldBytes(body: any): number {
  const value = body?.max_credits;
  // Only the shapes max_credits may take (a number, a decimal string, null) are measured: anything else is refused
  // by checkMaxCredits, and serialising it could cost more than the request is worth (a deeply nested array).
  if (typeof value !== "number" && typeof value !== "string" && value !== null) return 0;
  return '"max_credits":,'.length + Buffer.byteLength(JSON.stringify(value));
}

/**
 * `max_credits` (credits, accepted on every LLM endpoint): the most the caller is willing to pay for the call. Below
 * the hold the request is refused before anything goes upstream, with its own code so a client can tell it from
 * an empty wallet; otherwise it is returned (µcr) and caps the charge (capAtMaxCredits).
 */
export function checkMaxCredits(body: any, hold: number): number | undefined {
  let limit: number | undefined;
  try {
    limit = maxCreditsToMicros(body?.max_credits);
  } catch (e) {
    throw new ApiError(400, "invalid_max_credits", (e as Error).message, { param: "max_credits" });
  }
  if (limit === undefined) return undefined;
  if (limit < hold) {
    throw new ApiError(
      402,
      "max_credits_exceeded",
      `This request needs a hold of up to ${microsToCredits(hold)} credits, above its max_credits of ${microsToCredits(limit)}. Lower max_tokens or raise max_credits.`,
      { type: "insufficient_quota", param: "max_credits" },
    );
  }
  return limit;
}

/**
 * The caller's max_credits is a ceiling on the charge, not only on the hold: an upstream that bills more than was
 * held (input the gateway could not see) is charged at most max_credits, and the record says so.
 */
export function capAtMaxCredits(verdict: Verdict, plan: HoldPlan): Verdict {
  if (plan.cap === undefined || verdict.charge === null || verdict.charge <= plan.cap) return verdict;
  return {
    ...verdict,
    charge: plan.cap,
    error: [
      verdict.error,
      `charge capped at ${plan.capReason ?? "max_credits"} (the usage stated came to ${microsToCredits(verdict.charge)} credits)`,
    ]
      .filter(Boolean)
      .join("; "),
  };
}

export type Outcome =
  | "ok"
  | "estimated"
  | "client_abort"
  | "shutdown"
  | "failed"
  | "dropped"
  | "upstream_error"
  | "upstream_bad_response"
  | "upstream_timeout"
  | "rejected";

export interface Verdict {
  outcome: Outcome;
  /** µcr to settle; null → release */
  charge: number | null;
  usage: TokenUsage | null;
  error?: string;
}

/**
 * The charge for the usage an answer stated. Usage too large to price exactly (an upstream anomaly: 1e300 tokens,
 * a charge beyond 2^53 µcr) is charged the hold, the most the caller agreed to, and says so.
 */
function statedUsage(usage: TokenUsage, model: LlmModel, plan: HoldPlan): Verdict {
  try {
    return { outcome: "ok", charge: chargeUsage(usage, model.prices), usage };
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    const recorded = Object.fromEntries(
      Object.entries(usage).map(([k, n]) => [k, Math.min(n, Number.MAX_SAFE_INTEGER)]),
    ) as unknown as TokenUsage;
    return {
      outcome: "estimated",
      charge: plan.amount,
      usage: recorded,
      error: "upstream usage out of range: charged the hold",
    };
  }
}

export const UPSTREAM_SILENT = "upstream silent for longer than LLM_SILENCE_TIMEOUT_SECONDS";

/** What a finished stream means for the wallet. `how` is how the byte pump ended. */
export function streamVerdict(tapped: TapResult, how: PumpEnd, model: LlmModel, plan: HoldPlan): Verdict {
  if (tapped.failed) return { outcome: "failed", charge: null, usage: tapped.usage, error: describeTapError(tapped) };
  // SDKs close the connection as soon as they have read the end (the openai SDK aborts its request after the
  // last event): a stream whose normal end and usage were seen is complete, however the client left.
  if (tapped.completed && tapped.usage) return statedUsage(tapped.usage, model, plan);
  // The client got part of the answer: it left, or the gateway's shutdown ended the stream.
  if (how === "client_abort" || how === "shutdown") return estimateVerdict(tapped, model, plan, how);
  if (how === "timeout")
    return { outcome: "upstream_timeout", charge: null, usage: tapped.usage, error: UPSTREAM_SILENT };
  if (how === "ended_early")
    return {
      outcome: "dropped",
      charge: null,
      usage: tapped.usage,
      error: "upstream stream ended before its final event",
    };
  if (how === "dropped" || !tapped.completed)
    return { outcome: "dropped", charge: null, usage: tapped.usage, error: "upstream connection ended early" };
  // A normal end without usage (an upstream that ignores include_usage): the same estimate as a client abort.
  return estimateVerdict(tapped, model, plan, "estimated");
}

/**
 * The verdict on usage an answer stated. An answer that states none is charged the estimate instead
 * (estimateVerdict, with the generated content it carries: call.ts answerVerdict).
 */
export function usageVerdict(usage: TokenUsage, model: LlmModel, plan: HoldPlan): Verdict {
  return statedUsage(usage, model, plan);
}

/** Nothing of the answer seen: what a call the client left before any of it is charged (the input estimate). */
export const NOTHING_SEEN = Object.freeze({ usage: null, outputCharsSoFar: 0 });

/**
 * The charge from what was seen instead of stated usage: the input estimate (or the input a stream stated) and the
 * output seen so far, never above the hold. For a client that left, a shutdown, or an answer that states no usage.
 */
export function estimateVerdict(
  seen: { usage: TokenUsage | null; outputCharsSoFar: number; webSearchesSoFar?: number },
  model: LlmModel,
  plan: HoldPlan,
  outcome: Outcome,
): Verdict {
  const usage = partialUsage(seen, plan.inputEstimate);
  const verdict = statedUsage(usage, model, plan);
  return { ...verdict, outcome, charge: Math.min(verdict.charge!, plan.amount) };
}

/**
 * The verdict, or — should working it out ever throw (a defect) — a release, so the call's reservation is always
 * finished: an unfinished one would keep its credits held in the float until the process restarts.
 */
export function verdictOr(judge: () => Verdict, log: (error: string) => void): Verdict {
  try {
    return judge();
  } catch (e) {
    log(String((e as Error)?.message ?? e));
    return { outcome: "failed", charge: null, usage: null, error: "metering failed; released" };
  }
}

function describeTapError(tapped: TapResult): string {
  const error = tapped.error;
  return [error?.type, error?.code, error?.message].filter(Boolean).join(": ") || "upstream reported a failure";
}

/**
 * A key with a budget is charged at most its call's hold: the budget admitted the hold, and a charge beyond it (usage
 * the upstream states that the hold could not foresee) would take the key past its cap. max_credits is never below
 * the hold (checkMaxCredits), so this only lowers the cap.
 */
export function capAtHold(plan: HoldPlan): void {
  plan.cap = plan.amount;
  plan.capReason = "the hold (the key has a budget)";
}
