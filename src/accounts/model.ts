import { t } from "elysia";
import { MAX_BUDGET_CREDITS } from "../ledger/units";

// Request bodies of the admin API (validated by Elysia; failures answer 422 naming the field).
export const CreateAccountBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  credits: t.Optional(t.Number({ minimum: 0, description: "Initial credits (1 credit = 0.001 USD)." })),
});

/**
 * The range of a key's own limits, for every form an operator or a user creates keys with (this schema, the
 * dashboard's Settings → API Keys), so the two cannot drift apart. The dashboard also keeps a customer's keys
 * within the default limits (dashboard/keys.ts refuseLooserThanDefault). The CLI's request count is left unbounded
 * on purpose: it is the operator at a shell, and the benchmark gives its key a limit no customer should have; the
 * window is bounded for every caller (accounts/service.ts createKey).
 */
export const KEY_LIMITS = {
  rateRequests: { min: 1, max: 1_000_000 },
  rateWindowSeconds: { min: 1, max: 86_400 },
  maxConcurrentTasks: { min: 1, max: 10_000 },
} as const;

/** The periods a key's budget may cap: calendar day, week (from Monday) and month in UTC, and the key's lifetime. */
export const BUDGET_PERIODS = ["day", "week", "month", "lifetime"] as const;

const bounded = (b: { min: number; max: number }) => t.Integer({ minimum: b.min, maximum: b.max });

// The policy fields are described here for /openapi.json and validated by accounts/policy.ts parseKeyPolicy, the one
// function the CLI and the dashboard use too (t.Unknown carries the description without a second validator).
const budgetAmount = { anyOf: [{ type: "number", minimum: 0, maximum: MAX_BUDGET_CREDITS }, { type: "null" }], description: "Credits; null: no cap." };
const policyFields = {
  models: t.Optional(
    t.Unknown({
      anyOf: [{ type: "array", minItems: 1, maxItems: 100, items: { type: "string", pattern: "^(\\*|[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}\\*?)$" } }, { type: "null" }],
      description: "Models the key may call: ids, prefixes ending in `*` (`claude-*`), or `*`. null or absent: every model.",
    }),
  ),
  expires_at: t.Optional(
    t.Unknown({ anyOf: [{ type: "string", format: "date-time" }, { type: "null" }], description: "RFC 3339 time after which the key answers 401 key_expired; in the future. null: never." }),
  ),
  budget: t.Optional(
    t.Unknown({
      anyOf: [
        { type: "object", additionalProperties: false, properties: Object.fromEntries(BUDGET_PERIODS.map((p) => [p, budgetAmount])) },
        { type: "null" },
      ],
      description: "Credits the key may spend per calendar day, week (from Monday) and month in UTC, and in its lifetime. null: no caps.",
    }),
  ),
};

export const CreateKeyBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  rate_limit: t.Optional(
    t.Object({
      requests: bounded(KEY_LIMITS.rateRequests),
      window_seconds: bounded(KEY_LIMITS.rateWindowSeconds),
    }),
  ),
  max_concurrent_tasks: t.Optional(bounded(KEY_LIMITS.maxConcurrentTasks)),
  ...policyFields,
});

/** An edit: only the fields given change; null puts a field back to its default. */
export const UpdateKeyBody = t.Object({
  name: t.Optional(t.Unknown({ type: "string", minLength: 1, maxLength: 200 })),
  rate_limit: t.Optional(
    t.Unknown({
      anyOf: [
        {
          type: "object",
          required: ["requests", "window_seconds"],
          properties: {
            requests: { type: "integer", minimum: KEY_LIMITS.rateRequests.min, maximum: KEY_LIMITS.rateRequests.max },
            window_seconds: { type: "integer", minimum: KEY_LIMITS.rateWindowSeconds.min, maximum: KEY_LIMITS.rateWindowSeconds.max },
          },
        },
        { type: "null" },
      ],
      description: "null: the gateway's default rate limit.",
    }),
  ),
  max_concurrent_tasks: t.Optional(
    t.Unknown({ anyOf: [{ type: "integer", minimum: KEY_LIMITS.maxConcurrentTasks.min, maximum: KEY_LIMITS.maxConcurrentTasks.max }, { type: "null" }] }),
  ),
  ...policyFields,
});

export const CreditsBody = t.Object({
  credits: t.Number({ description: "Credits to add. Negative only with kind=correction." }),
  reason: t.Optional(t.String({ maxLength: 500 })),
  kind: t.Optional(t.Union([t.Literal("topup"), t.Literal("correction")])),
});
