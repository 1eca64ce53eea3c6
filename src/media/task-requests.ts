// What a task request is, and the checks task creation and the public estimate share: the model, its input (with
// the estimate), max_credits and the callback URL. Each refusal is a 4xx naming the field, raised before anything
// is held.
import type { Budget } from "../accounts/policy";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { maxCreditsToMicros, microsToCredits } from "../ledger/units";
import type { MediaModel } from "./model";
import { checkCallbackUrl } from "./ssrf";

export interface CreateRequest {
  model: unknown;
  input: unknown;
  callbackUrl?: unknown;
  maxCredits?: unknown;
  /** The original request as sent (kept as the record's `param`). */
  param: unknown;
  /** How this front door names its fields in errors (callBackUrl vs callback_url; input.x vs x). */
  names: { callback: string; inputPrefix: string };
}

/** The key a task is created with: who pays, and the limits its policy sets. */
export interface CallingKey {
  keyId: string;
  accountId: string;
  maxConcurrentTasks: number | null;
  models: string[] | null;
  budget: Budget;
}

export function requireModel(ctx: AppContext, id: unknown): MediaModel {
  if (typeof id !== "string" || !id)
    throw new ApiError(422, "invalid_request", "model is required.", { param: "model" });
  const model = ctx.catalog.findMedia(id);
  if (model) {
    ctx.catalog.servable(model);
    return model;
  }
  const llm = ctx.catalog.llm.get(id);
  if (llm) ctx.catalog.servable(llm); // a retired LLM answers 410 naming its successor, not the endpoint it no longer has
  if (llm)
    throw new ApiError(
      422,
      "wrong_endpoint",
      `Model ${llm.id} is a language model, not a media task: call POST ${llm.endpoint} with it.`,
      { param: "model" },
    );
  throw new ApiError(422, "model_not_found", `Unknown media model ${JSON.stringify(id)}; GET /v1/models lists them.`, {
    param: "model",
  });
}

/** Validated input and its estimate, or a 422 naming the field. */
export function prepareInput(model: MediaModel, input: unknown, inputPrefix: string) {
  const prepared = model.prepare(input ?? {});
  if (!prepared.ok) {
    const param = prepared.field === "input" ? "input" : inputPrefix + prepared.field;
    throw new ApiError(422, "invalid_request", `${param}: ${prepared.message}`, { param });
  }
  return prepared;
}

/** max_credits as µcr (undefined when absent); a malformed or too large value is a 422 (units.ts has the rule). */
export function budgetOf(maxCredits: unknown): number | undefined {
  try {
    return maxCreditsToMicros(maxCredits);
  } catch (e) {
    throw new ApiError(422, "invalid_max_credits", (e as Error).message, { param: "max_credits" });
  }
}

export function overBudget(estimate: number, maxCredits: number): ApiError {
  return new ApiError(
    402,
    "max_credits_exceeded",
    `This task is estimated at ${microsToCredits(estimate)} credits, above max_credits ${microsToCredits(maxCredits)}; nothing was created or charged.`,
    { param: "max_credits", type: "insufficient_quota" },
  );
}

/** The request's callback URL once the callback guard (ssrf.ts) accepts it; null when none was given. */
export async function checkedCallbackUrl(req: CreateRequest, allowPrivate: boolean): Promise<string | null> {
  if (req.callbackUrl === undefined || req.callbackUrl === null || req.callbackUrl === "") return null;
  const check =
    typeof req.callbackUrl === "string"
      ? await checkCallbackUrl(req.callbackUrl, allowPrivate)
      : { ok: false as const, reason: "must be a string" };
  if (!check.ok)
    throw new ApiError(422, "invalid_callback_url", `${req.names.callback} ${check.reason}.`, {
      param: req.names.callback,
    });
  return req.callbackUrl as string;
}
