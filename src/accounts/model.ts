import { t } from "elysia";

// Request bodies of the admin API (validated by Elysia; failures answer 422 naming the field).
export const CreateAccountBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  credits: t.Optional(t.Number({ minimum: 0, description: "Initial credits (1 credit = 0.001 USD)." })),
});

export const CreateKeyBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  rate_limit: t.Optional(
    t.Object({
      requests: t.Integer({ minimum: 1, maximum: 1_000_000 }),
      window_seconds: t.Integer({ minimum: 1, maximum: 86_400 }),
    }),
  ),
  max_concurrent_tasks: t.Optional(t.Integer({ minimum: 1, maximum: 10_000 })),
});

export const CreditsBody = t.Object({
  credits: t.Number({ description: "Credits to add. Negative only with kind=correction." }),
  reason: t.Optional(t.String({ maxLength: 500 })),
  kind: t.Optional(t.Union([t.Literal("topup"), t.Literal("correction")])),
});
