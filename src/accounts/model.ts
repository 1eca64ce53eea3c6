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

// Answers of the admin API (published in /openapi.json). Objects stay open: the views may gain fields.
const Open = <T extends Parameters<typeof t.Object>[0]>(props: T, description?: string) => t.Object(props, { additionalProperties: true, ...(description && { description }) });
const Iso = t.String({ description: "ISO 8601 time." });

export const KeyView = Open({
  id: t.String(),
  name: t.Nullable(t.String()),
  prefix: t.String({ description: "The key's first characters, to recognise it (never the key)." }),
  rate_limit: t.Nullable(Open({ requests: t.Integer(), window_seconds: t.Integer() })),
  max_concurrent_tasks: t.Nullable(t.Integer()),
  models: t.Nullable(t.Array(t.String()), { description: "Models the key may call (ids, `prefix-*`, `*`); null: every model." }),
  expires_at: t.Nullable(Iso),
  budget: t.Record(t.String(), t.Number(), { description: "Credits per period (day, week, month, lifetime); a period absent has no cap." }),
  created_at: Iso,
  revoked_at: t.Nullable(Iso),
  last_used_at: t.Nullable(Iso),
});
export const KeyCreated = t.Composite([KeyView, t.Object({ key: t.String({ description: "The plaintext key, shown this once." }) })], { additionalProperties: true });
export const KeyList = Open({ data: t.Array(KeyView) });

export const AccountView = Open({
  id: t.String(),
  name: t.String(),
  created_at: Iso,
  has_webhook_key: t.Boolean(),
  credits: t.Number({ description: "Available credits (balance minus held)." }),
  held_credits: t.Number(),
  balance_credits: t.Number(),
  holds: t.Optional(t.Array(Open({ id: t.String(), credits: t.Number(), kind: t.String(), ref: t.Nullable(t.String()), created_at: Iso, expires_at: Iso }))),
  ledger: t.Optional(t.Array(Open({ id: t.Any(), hold_id: t.Nullable(t.String()), kind: t.String(), credits: t.Number(), micro_credits: t.Integer(), reason: t.Nullable(t.String()), created_at: Iso }))),
  keys: t.Optional(t.Array(KeyView)),
}, "An account; with its pending holds, last ledger entries and keys when read by id.");
export const AccountList = Open({ data: t.Array(Open({ id: t.String(), name: t.String(), created_at: t.Number({ description: "Unix ms" }) })) });
export const CreditsResult = Open({ account_id: t.String(), credits: t.Number(), held_credits: t.Number(), balance_credits: t.Number() });
export const WebhookKey = Open({ key: t.String({ description: "The signing key, shown this once." }) });
export const LedgerCheck = Open({ ok: t.Boolean(), mismatches: t.Array(t.Record(t.String(), t.Any())) });
