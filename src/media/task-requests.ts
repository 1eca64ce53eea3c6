// What a task request is, and the checks task creation and the public estimate share: the model, its input (with
// the estimate), max_credits and the callback URL. Each refusal is a 4xx naming the field, raised before anything
// is held.
import type { Budget } from "../accounts/policy";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { maxCreditsToMicros, microsToCredits } from "../ledger/units";
import type { MediaModel } from "./model";
import { isIP } from "node:net";
import { isNonPublicAddress } from "./special-addresses";
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

/**
 * A 422 naming the first input URL whose host is a non-public address literal or localhost. The upstream fetches
 * it on the operator's account, from its own network; a name is not resolved here (the upstream resolves it, later).
 */
export function refusePrivateInputUrls(model: MediaModel, value: Record<string, unknown>, inputPrefix: string): void {
  for (const [name, def] of Object.entries(model.input.properties)) {
    const v = value[name];
    const urls = def.type === "url" ? [v] : def.type === "array" && (def.items ?? "url") === "url" ? v : [];
    if (!Array.isArray(urls)) continue;
    urls.forEach((url, i) => {
      if (typeof url !== "string" || !namesPrivateHost(url)) return;
      const param = inputPrefix + (def.type === "url" ? name : `${name}[${i}]`);
      throw new ApiError(422, "invalid_request", `${param}: must not point at a non-public address.`, { param });
    });
  }
}

function namesPrivateHost(url: string): boolean {
  const host =
    URL.parse(url)
      ?.hostname.replace(/^\[|\]$/g, "")
      .replace(/\.$/, "") // "localhost." is localhost
      .toLowerCase() ?? "";
  if (isIP(host)) return isNonPublicAddress(host);
  return host === "localhost" || host.endsWith(".localhost");
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
