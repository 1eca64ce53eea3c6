import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { protect } from "../http/protect";
import { MICROS_PER_USD, microsToCredits } from "./units";

export const CreditsResponse = t.Object({
  credits: t.Number({ description: "Spendable now (balance minus held), in credits (1 credit = 0.001 USD)." }),
  usd: t.Number({ description: "The same in USD." }),
  held_credits: t.Number({ description: "Reserved by requests and tasks in flight." }),
});

export function creditRoutes(ctx: AppContext) {
  return new Elysia({ name: "credits" }).use(protect(ctx)).get(
    "/v1/credits",
    async ({ auth }) => {
      // Calls just answered: their charges are queued. One charged above what it reserved takes the rest from the
      // balance, which shows only once it is committed.
      await ctx.llmLedger.committedFor(auth.accountId);
      const b = (await ctx.ledger.balance(auth.accountId))!;
      return {
        credits: microsToCredits(b.available),
        usd: b.available / MICROS_PER_USD,
        held_credits: microsToCredits(b.held),
      };
    },
    {
      response: CreditsResponse,
      detail: {
        tags: ["Credits"],
        summary: "Your balance in credits and USD",
        security: [{ bearer: [] }, { apiKey: [] }],
      },
    },
  );
}
