import { ApiError } from "../http/errors";
import { MAX_BUDGET_CREDITS, maxCreditsToMicros } from "../ledger/units";
import { BUDGET_PERIODS, KEY_LIMITS } from "./model";

// A key's policy: name, limits, model allow-list, expiry and budgets. One function reads it from whatever form a
// caller used (admin API JSON, CLI flags, dashboard form, each turned into the JSON shape first), so every door
// refuses the same input with the same 422 naming the field, before anything is written.

export { BUDGET_PERIODS };
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
/** µcr per period; a missing period has no cap. */
export type Budget = Partial<Record<BudgetPeriod, number>>;

/** What a create or an edit sets. undefined: left as it is (an edit) or the default (a creation); null: cleared. */
export interface KeyPolicyChange {
  name?: string;
  rateLimit?: { requests: number; windowSeconds: number } | null;
  maxConcurrentTasks?: number | null;
  models?: string[] | null;
  expiresAt?: number | null;
  /** per period: a cap in µcr, or null to clear it */
  budget?: Partial<Record<BudgetPeriod, number | null>>;
}

const MAX_MODELS = 100;
// An id as the catalog spells them, optionally ending in one `*` (a prefix); `*` alone allows every model.
const MODEL_PATTERN = /^(\*|[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}\*?)$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
export const BUDGET_RULE = `a number of credits from 0 to ${MAX_BUDGET_CREDITS} with at most 6 decimals, or null for no cap`;

const refuse = (field: string, rule: string) =>
  new ApiError(422, "invalid_request", `${field}: ${rule}`, { param: field });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Reads a key's policy from its JSON shape (`name`, `rate_limit`, `max_concurrent_tasks`, `models`, `expires_at`,
 * `budget`). `requestsMax` is the largest request count allowed (the CLI's is unbounded: the operator at a shell).
 */
export function parseKeyPolicy(input: unknown, now: number, opts: { requestsMax?: number } = {}): KeyPolicyChange {
  if (!isObject(input)) throw new ApiError(422, "invalid_request", "The request body must be a JSON object.");
  const out: KeyPolicyChange = {};
  const known = new Set(["name", "rate_limit", "max_concurrent_tasks", "models", "expires_at", "budget"]);
  for (const k of Object.keys(input))
    if (!known.has(k)) throw refuse(k, `unknown field; a key has ${[...known].join(", ")}`);

  if (input.name !== undefined) {
    if (typeof input.name !== "string" || !input.name.trim() || input.name.length > 200)
      throw refuse("name", "must be text of 1 to 200 characters");
    out.name = input.name.trim();
  }
  if (input.rate_limit !== undefined)
    out.rateLimit = input.rate_limit === null ? null : rateLimit(input.rate_limit, opts.requestsMax);
  if (input.max_concurrent_tasks !== undefined)
    out.maxConcurrentTasks =
      input.max_concurrent_tasks === null
        ? null
        : whole(input.max_concurrent_tasks, "max_concurrent_tasks", KEY_LIMITS.maxConcurrentTasks);
  if (input.models !== undefined) out.models = input.models === null ? null : models(input.models);
  if (input.expires_at !== undefined) out.expiresAt = input.expires_at === null ? null : expiry(input.expires_at, now);
  if (input.budget !== undefined) out.budget = budget(input.budget);
  return out;
}

function whole(value: unknown, field: string, range: { min: number; max: number }): number {
  const number = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < range.min || number > range.max)
    throw refuse(field, `must be a whole number from ${range.min} to ${range.max}`);
  return number;
}

function rateLimit(
  v: unknown,
  requestsMax: number = KEY_LIMITS.rateRequests.max,
): { requests: number; windowSeconds: number } {
  if (!isObject(v) || v.requests === undefined || v.window_seconds === undefined)
    throw refuse("rate_limit", "needs both requests and window_seconds, or null for the default");
  return {
    requests: whole(v.requests, "rate_limit.requests", { min: KEY_LIMITS.rateRequests.min, max: requestsMax }),
    windowSeconds: whole(v.window_seconds, "rate_limit.window_seconds", KEY_LIMITS.rateWindowSeconds),
  };
}

function models(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_MODELS)
    throw refuse(
      "models",
      `must be a list of 1 to ${MAX_MODELS} model ids or patterns (\`claude-*\`, \`*\`), or null for every model`,
    );
  return [
    ...new Set(
      v.map((m, i) => {
        if (typeof m !== "string" || !MODEL_PATTERN.test(m))
          throw refuse(`models.${i}`, "must be a model id, an id prefix ending in `*` (e.g. `claude-*`), or `*`");
        return m;
      }),
    ),
  ];
}

function expiry(v: unknown, now: number): number {
  const ms = typeof v === "string" && RFC3339.test(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms))
    throw refuse(
      "expires_at",
      "must be a date and time in RFC 3339 form, e.g. 2027-01-31T00:00:00Z, or null for never",
    );
  if (ms <= now) throw refuse("expires_at", "must be in the future");
  return ms;
}

function budget(v: unknown): Partial<Record<BudgetPeriod, number | null>> {
  if (v === null) return Object.fromEntries(BUDGET_PERIODS.map((p) => [p, null]));
  if (!isObject(v))
    throw refuse("budget", `must be an object of credits per period (${BUDGET_PERIODS.join(", ")}), or null for none`);
  const out: Partial<Record<BudgetPeriod, number | null>> = {};
  for (const [period, amount] of Object.entries(v)) {
    if (!(BUDGET_PERIODS as readonly string[]).includes(period))
      throw refuse(`budget.${period}`, `unknown period; the periods are ${BUDGET_PERIODS.join(", ")}`);
    if (amount === null) {
      out[period as BudgetPeriod] = null;
      continue;
    }
    // A string is accepted only when it is a decimal (the CLI's flags); anything else is not a number.
    let micros: number | undefined;
    try {
      micros =
        typeof amount === "number" || (typeof amount === "string" && amount.trim() !== "")
          ? maxCreditsToMicros(amount)
          : undefined;
    } catch {
      micros = undefined;
    }
    if (micros === undefined) throw refuse(`budget.${period}`, `must be ${BUDGET_RULE}`);
    out[period as BudgetPeriod] = micros;
  }
  return out;
}

/** A change read for a new key, as createKey takes it (a null there is simply the default). */
export function newKeyPolicy(change: KeyPolicyChange) {
  const budget: Budget = {};
  for (const period of BUDGET_PERIODS) if (change.budget?.[period] != null) budget[period] = change.budget[period]!;
  return {
    name: change.name,
    rateRequests: change.rateLimit?.requests,
    rateWindowSeconds: change.rateLimit?.windowSeconds,
    maxConcurrentTasks: change.maxConcurrentTasks ?? undefined,
    models: change.models ?? null,
    expiresAt: change.expiresAt ?? null,
    budget,
  };
}

/** Whether `model` is allowed by a key's list (null: every model). A pattern `p*` allows ids starting with `p`. */
export function modelAllowed(allowed: readonly string[] | null, model: string): boolean {
  if (allowed === null) return true;
  return allowed.some((p) => (p.endsWith("*") ? model.startsWith(p.slice(0, -1)) : p === model));
}

/**
 * 403 model_not_allowed unless the key's list allows the model: a pattern matching its id or one of the catalog's
 * aliases for it, or an entry that is exactly the name the caller sent. Never a pattern matching only the caller's
 * spelling: a media model is found by a short name too (`bytedance/seedance/…` for `fal-ai/bytedance/seedance/…`),
 * which `bytedance/*` must not let through. Checked before anything is held or sent upstream.
 */
export function refuseModelNotAllowed(
  allowed: readonly string[] | null,
  requested: string,
  model: { id: string; aliases?: readonly string[] },
): void {
  if (allowed === null || allowed.includes(requested)) return;
  if ([model.id, ...(model.aliases ?? [])].some((name) => modelAllowed(allowed, name))) return;
  throw new ApiError(
    403,
    "model_not_allowed",
    `This API key may not call model ${model.id}; it may call ${allowed.join(", ")}. Nothing was charged.`,
    { param: "model" },
  );
}
