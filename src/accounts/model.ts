import { t } from "elysia";

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

const bounded = (b: { min: number; max: number }) => t.Integer({ minimum: b.min, maximum: b.max });

export const CreateKeyBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  rate_limit: t.Optional(
    t.Object({
      requests: bounded(KEY_LIMITS.rateRequests),
      window_seconds: bounded(KEY_LIMITS.rateWindowSeconds),
    }),
  ),
  max_concurrent_tasks: t.Optional(bounded(KEY_LIMITS.maxConcurrentTasks)),
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
