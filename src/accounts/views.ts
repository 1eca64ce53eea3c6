import { sql } from "drizzle-orm";
import type { AppContext } from "../context";
import { microsToCredits } from "../ledger/units";
import type { AccountView } from "./model";

// The JSON an operator (admin API, CLI) sees for an account.
export async function accountView(ctx: AppContext, id: string, opts: { withLedger?: boolean } = {}) {
  const account = await ctx.accounts.requireAccount(id);
  await ctx.llmLedger.committedFor(id); // calls just answered: their charges may still be queued
  const wallet = (await ctx.ledger.balance(id))!;
  const view: Record<string, unknown> = {
    id: account.id,
    name: account.name,
    created_at: new Date(account.created_at).toISOString(),
    has_webhook_key: account.webhook_secret != null,
    credits: microsToCredits(wallet.available),
    held_credits: microsToCredits(wallet.held),
    balance_credits: microsToCredits(wallet.balance),
  };
  if (opts.withLedger) {
    const holds = await ctx.db.all<any>(sql`select id, amount, kind, ref, created_at, expires_at from holds
      where account_id = ${id} and status = ${"pending"} order by created_at desc limit 100`);
    const entries = await ctx.db.all<any>(sql`select id, hold_id, kind, amount, reason, created_at from entries
      where account_id = ${id} order by created_at desc, id desc limit 100`);
    view.holds = holds.map((hold) => ({
      id: hold.id,
      credits: microsToCredits(hold.amount),
      kind: hold.kind,
      ref: hold.ref,
      created_at: new Date(hold.created_at).toISOString(),
      expires_at: new Date(hold.expires_at).toISOString(),
    }));
    view.ledger = entries.map((entry) => ({
      id: entry.id,
      hold_id: entry.hold_id,
      kind: entry.kind,
      credits: microsToCredits(entry.amount),
      micro_credits: entry.amount,
      reason: entry.reason,
      created_at: new Date(entry.created_at).toISOString(),
    }));
    view.keys = await ctx.accounts.listKeys(id);
  }
  return view as typeof AccountView.static; // the shape admin-routes.ts publishes and validates
}
