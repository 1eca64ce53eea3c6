import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { withIdleFloatBack } from "../ledger/float";
import { creditsToMicros, microsToCredits } from "../ledger/units";
import {
  AccountList,
  AccountView,
  CreateAccountBody,
  CreateKeyBody,
  CreditsBody,
  CreditsResult,
  KeyCreated,
  KeyList,
  KeyView,
  LedgerCheck,
  UpdateKeyBody,
  WebhookKey,
} from "./model";
import { newKeyPolicy, parseKeyPolicy } from "./policy";
import { accountView } from "./views";
import { routeGuards } from "../http/guards";
import { errorCodes } from "../http/route-docs";

// The operator's API under /admin/v1, authorised by ADMIN_TOKEN (`{ admin: true }`, http/guards.ts: checked before
// the body is read, so a caller without it learns nothing of a route's schema). Without ADMIN_TOKEN it refuses
// everything: an operator then uses the CLI, which talks to the database directly.

/**
 * Reads a key's policy from the body as sent, in transform, before Elysia validates and cleans it: parseKeyPolicy's
 * 422 naming the field is then the answer to any bad input, and an unknown field is refused, not dropped by the
 * cleaner. The handler reads the cleaned body again (the same fields, by then).
 */
const policyReadFirst = ({ body }: { body: unknown }) => {
  parseKeyPolicy(body, Date.now());
};

/** The routes under /accounts/:id answer 404 for an unknown account (a new object per route: Elysia merges into it). */
const unknownAccount = () => errorCodes({ 404: ["not_found"] });

/** The operator's API is one Elysia instance per resource, composed; each declares the admin guard itself. */
export function adminRoutes(ctx: AppContext) {
  return new Elysia({ name: "admin" })
    .use(accountRoutes(ctx))
    .use(keyRoutes(ctx))
    .use(creditRoutes(ctx))
    .use(webhookKeyRoutes(ctx))
    .use(ledgerCheckRoutes(ctx));
}

/** One resource's instance under /admin/v1 (fresh options each: Elysia merges route details into them). */
function adminInstance(ctx: AppContext, name: string) {
  return new Elysia({
    name,
    prefix: "/admin/v1",
    detail: { tags: ["Admin"], security: [{ adminToken: [] }] },
  }).use(routeGuards(ctx));
}

function accountRoutes(ctx: AppContext) {
  const { accounts } = ctx;
  return adminInstance(ctx, "admin-accounts")
    .post(
      "/accounts",
      async ({ body, set }) => {
        const account = await accounts.createAccount(body.name, toMicros(body.credits ?? 0, "credits"));
        set.status = 201;
        return accountView(ctx, account.id);
      },
      {
        admin: true,
        body: CreateAccountBody,
        response: { 201: AccountView },
        detail: { summary: "Create an account with a wallet and optional initial credits" },
      },
    )
    .get("/accounts", async () => ({ data: await accounts.listAccounts() }), {
      admin: true,
      response: AccountList,
      detail: { summary: "List accounts" },
    })
    .get("/accounts/:id", ({ params }) => accountView(ctx, params.id, { withLedger: true }), {
      admin: true,
      response: AccountView,
      detail: { ...unknownAccount(), summary: "Read an account: balance, pending holds, ledger entries and keys" },
    });
}

function keyRoutes(ctx: AppContext) {
  const { accounts } = ctx;
  return adminInstance(ctx, "admin-keys")
    .post(
      "/accounts/:id/keys",
      async ({ params, body, set }) => {
        const created = await accounts.createKey(params.id, newKeyPolicy(parseKeyPolicy(body, Date.now())));
        set.status = 201;
        return created;
      },
      {
        admin: true,
        body: CreateKeyBody,
        transform: policyReadFirst,
        response: { 201: KeyCreated },
        detail: { ...unknownAccount(), summary: "Create an API key (the plaintext key is returned once)" },
      },
    )
    .patch(
      "/accounts/:id/keys/:keyId",
      ({ params, body }) => accounts.updateKey(params.id, params.keyId, parseKeyPolicy(body, Date.now())),
      {
        admin: true,
        body: UpdateKeyBody,
        transform: policyReadFirst,
        response: KeyView,
        detail: {
          ...errorCodes({ 404: ["not_found"], 409: ["key_revoked"] }),
          summary:
            "Change a key's name, limits, models, expiry or budget (only the fields given; null: back to the default)",
        },
      },
    )
    .get(
      "/accounts/:id/keys",
      async ({ params }) => {
        await accounts.requireAccount(params.id);
        return { data: await accounts.listKeys(params.id) };
      },
      {
        admin: true,
        response: KeyList,
        detail: { ...unknownAccount(), summary: "List an account's keys (by prefix; never the key)" },
      },
    )
    .delete("/accounts/:id/keys/:keyId", ({ params }) => accounts.revokeKey(params.id, params.keyId), {
      admin: true,
      response: KeyView,
      detail: { ...unknownAccount(), summary: "Revoke a key" },
    });
}

function creditRoutes(ctx: AppContext) {
  return adminInstance(ctx, "admin-credits").post(
    "/accounts/:id/credits",
    async ({ params, body }) => {
      const kind = body.kind ?? "topup";
      const micros = toMicros(body.credits, "credits", kind === "correction");
      if (micros === 0) throw new ApiError(422, "invalid_request", "credits must not be zero.", { param: "credits" });
      // Calls just answered first: their charges are queued (the balance returned includes them). A correction that
      // does not fit what is available gets the account's idle LLM float back first, as a media task's hold does.
      await ctx.llmLedger.committedFor(params.id);
      const wallet = await withIdleFloatBack(ctx, params.id, "correction_exceeds_available", () =>
        ctx.ledger.credit(params.id, micros, kind, body.reason ?? kind),
      );
      return {
        account_id: params.id,
        credits: microsToCredits(wallet.available),
        held_credits: microsToCredits(wallet.held),
        balance_credits: microsToCredits(wallet.balance),
      };
    },
    {
      admin: true,
      body: CreditsBody,
      response: CreditsResult,
      detail: {
        ...errorCodes({
          404: ["not_found", "account_not_found"],
          409: ["correction_exceeds_available"],
          422: ["balance_too_large"],
        }),
        summary: "Top up credits, or correct them (kind=correction may be negative)",
      },
    },
  );
}

function webhookKeyRoutes(ctx: AppContext) {
  return adminInstance(ctx, "admin-webhook-key").post(
    "/accounts/:id/webhook-key",
    async ({ params, set }) => {
      set.status = 201;
      return ctx.accounts.rotateWebhookKey(params.id);
    },
    {
      admin: true,
      response: { 201: WebhookKey },
      detail: { ...unknownAccount(), summary: "Generate or rotate the account's webhook signing key (shown once)" },
    },
  );
}

function ledgerCheckRoutes(ctx: AppContext) {
  return adminInstance(ctx, "admin-ledger-check").get(
    "/ledger/check",
    async ({ query }) => {
      const mismatches = await ctx.ledger.check(query.account_id);
      return { ok: mismatches.length === 0, mismatches };
    },
    {
      admin: true,
      query: t.Object({ account_id: t.Optional(t.String()) }),
      response: LedgerCheck,
      detail: { summary: "Recompute every wallet from its entries and pending holds" },
    },
  );
}

function toMicros(credits: number, param: string, allowNegative = false): number {
  if (!allowNegative && credits < 0)
    throw new ApiError(
      422,
      "invalid_request",
      `${param} must not be negative (use kind=correction for a negative correction).`,
      { param },
    );
  try {
    return creditsToMicros(credits);
  } catch (error) {
    throw new ApiError(422, "invalid_request", `${param}: ${(error as Error).message}`, { param });
  }
}
