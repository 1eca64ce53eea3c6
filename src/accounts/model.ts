import { t, type TSchema } from "elysia";
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

const bounded = (range: { min: number; max: number }) => t.Integer({ minimum: range.min, maximum: range.max });

// The policy fields, for /openapi.json and a first check by Elysia. parseKeyPolicy (accounts/policy.ts), the one
// function the CLI and the dashboard use too, reads each body before this schema does (admin-routes.ts), so its 422
// naming the field is the answer to bad input. Real unions, not raw `anyOf`: Elysia builds its body cleaner from them.
const orNull = <T extends TSchema>(schema: T, description?: string) =>
  t.Union([schema, t.Null()], description ? { description } : {});
const budgetAmount = orNull(t.Number({ minimum: 0, maximum: MAX_BUDGET_CREDITS }), "Credits; null: no cap.");
const policyFields = {
  models: t.Optional(
    orNull(
      t.Array(t.String({ pattern: "^(\\*|[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}\\*?)$" }), {
        minItems: 1,
        maxItems: 100,
      }),
      "Models the key may call: ids, prefixes ending in `*` (`claude-*`), or `*`. null or absent: every model.",
    ),
  ),
  expires_at: t.Optional(
    orNull(
      t.String({ format: "date-time" }),
      "RFC 3339 time after which the key answers 401 key_expired; in the future. null: never.",
    ),
  ),
  budget: t.Optional(
    orNull(
      t.Object(Object.fromEntries(BUDGET_PERIODS.map((period) => [period, t.Optional(budgetAmount)])), {
        additionalProperties: false,
      }),
      "Credits the key may spend per calendar day, week (from Monday) and month in UTC, and in its lifetime. null: no caps.",
    ),
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
  name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  rate_limit: t.Optional(
    orNull(
      t.Object({ requests: bounded(KEY_LIMITS.rateRequests), window_seconds: bounded(KEY_LIMITS.rateWindowSeconds) }),
      "null: the gateway's default rate limit.",
    ),
  ),
  max_concurrent_tasks: t.Optional(orNull(bounded(KEY_LIMITS.maxConcurrentTasks))),
  ...policyFields,
});

export const CreditsBody = t.Object({
  credits: t.Number({ description: "Credits to add. Negative only with kind=correction." }),
  reason: t.Optional(t.String({ maxLength: 500 })),
  kind: t.Optional(t.Union([t.Literal("topup"), t.Literal("correction")])),
});

// Answers of the admin API (published in /openapi.json). Objects stay open: the views may gain fields.
const Open = <T extends Parameters<typeof t.Object>[0]>(props: T, description?: string) =>
  t.Object(props, { additionalProperties: true, ...(description && { description }) });
const Iso = t.String({ description: "ISO 8601 time." });

export const KeyView = Open({
  id: t.String(),
  name: t.Nullable(t.String()),
  prefix: t.String({ description: "The key's first characters, to recognise it (never the key)." }),
  rate_limit: t.Nullable(Open({ requests: t.Integer(), window_seconds: t.Integer() })),
  max_concurrent_tasks: t.Nullable(t.Integer()),
  models: t.Nullable(t.Array(t.String()), {
    description: "Models the key may call (ids, `prefix-*`, `*`); null: every model.",
  }),
  expires_at: t.Nullable(Iso),
  budget: t.Record(t.String(), t.Number(), {
    description: "Credits per period (day, week, month, lifetime); a period absent has no cap.",
  }),
  created_at: Iso,
  revoked_at: t.Nullable(Iso),
  last_used_at: t.Nullable(Iso),
});
export const KeyCreated = t.Composite(
  [KeyView, t.Object({ key: t.String({ description: "The plaintext key, shown this once." }) })],
  { additionalProperties: true },
);
export const KeyList = Open({ data: t.Array(KeyView) });

export const AccountView = Open(
  {
    id: t.String(),
    name: t.String(),
    created_at: Iso,
    has_webhook_key: t.Boolean(),
    credits: t.Number({ description: "Available credits (balance minus held)." }),
    held_credits: t.Number(),
    balance_credits: t.Number(),
    holds: t.Optional(
      t.Array(
        Open({
          id: t.String(),
          credits: t.Number(),
          kind: t.String(),
          ref: t.Nullable(t.String()),
          created_at: Iso,
          expires_at: Iso,
        }),
      ),
    ),
    ledger: t.Optional(
      t.Array(
        Open({
          id: t.Any(),
          hold_id: t.Nullable(t.String()),
          kind: t.String(),
          credits: t.Number(),
          micro_credits: t.Integer(),
          reason: t.Nullable(t.String()),
          created_at: Iso,
        }),
      ),
    ),
    keys: t.Optional(t.Array(KeyView)),
  },
  "An account; with its pending holds, last ledger entries and keys when read by id.",
);
export const AccountList = Open({
  data: t.Array(Open({ id: t.String(), name: t.String(), created_at: t.Number({ description: "Unix ms" }) })),
});
export const CreditsResult = Open({
  account_id: t.String(),
  credits: t.Number(),
  held_credits: t.Number(),
  balance_credits: t.Number(),
});
export const WebhookKey = Open({ key: t.String({ description: "The signing key, shown this once." }) });
export const LedgerCheck = Open({ ok: t.Boolean(), mismatches: t.Array(t.Record(t.String(), t.Any())) });
