import { sql } from "drizzle-orm";
import type { AppContext } from "../context";
import { microsToCredits } from "../ledger/units";
import type { AccountView } from "./model";

// The JSON an operator (admin API, CLI) sees for an account.
export async function accountView(ctx: AppContext, id: string, opts: { withLedger?: boolean } = {}) {
  const a = await ctx.accounts.requireAccount(id);
  await ctx.llmLedger.committedFor(id); // calls just answered: their charges may still be queued
  const b = (await ctx.ledger.balance(id))!;
  const view: Record<string, unknown> = {
    id: a.id,
    name: a.name,
    created_at: new Date(a.created_at).toISOString(),
    has_webhook_key: a.webhook_secret != null,
    credits: microsToCredits(b.available),
    held_credits: microsToCredits(b.held),
    balance_credits: microsToCredits(b.balance),
  };
  if (opts.withLedger) {
    const holds = await ctx.db.all<any>(sql`select id, amount, kind, ref, created_at, expires_at from holds
      where account_id = ${id} and status = ${"pending"} order by created_at desc limit 100`);
    const entries = await ctx.db.all<any>(sql`select id, hold_id, kind, amount, reason, created_at from entries
      where account_id = ${id} order by created_at desc, id desc limit 100`);
    view.holds = holds.map((h) => ({ id: h.id, credits: microsToCredits(h.amount), kind: h.kind, ref: h.ref, created_at: new Date(h.created_at).toISOString(), expires_at: new Date(h.expires_at).toISOString() }));
    view.ledger = entries.map((e) => ({ id: e.id, hold_id: e.hold_id, kind: e.kind, credits: microsToCredits(e.amount), micro_credits: e.amount, reason: e.reason, created_at: new Date(e.created_at).toISOString() }));
    view.keys = await ctx.accounts.listKeys(id);
  }
  return view as typeof AccountView.static; // the shape admin-routes.ts publishes and validates
}
