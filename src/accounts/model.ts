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
