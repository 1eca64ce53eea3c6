import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { html } from "../pages/layout";
import { credits, when } from "./format";
import { renderPage, sessionGuard, withSession } from "./guard";
import { walletLedger } from "./service";
import type { Users } from "./users";

// Wallet: spendable balance, credits held by requests and tasks in flight, and the ledger (every entry).

const ENTRIES = 200;

export function walletRoutes(ctx: AppContext, users: Users) {
  return new Elysia({ name: "dashboard-wallet", detail: { hide: true } }).use(sessionGuard(ctx, users)).get(
    "/dashboard",
    ({ request }) =>
      withSession(users, request, async (signedIn) => {
        const accountId = signedIn.session.accountId;
        const account = await ctx.accounts.getAccount(accountId);
        await ctx.llmLedger.committedFor(accountId); // calls just answered: their charges may still be queued
        const wallet = (await ctx.ledger.balance(accountId)) ?? { balance: 0, held: 0, available: 0 };
        const { pendingHolds, entries } = await walletLedger(ctx, accountId, ENTRIES);
        return renderPage({
          title: "Wallet",
          nonce: signedIn.nonce,
          page: signedIn,
          body: html`<h1>Wallet <span class="muted">${account?.name ?? ""}</span></h1>
<div class="card"><table><tr><th>Available</th><th>Held</th><th>Balance</th></tr>
<tr><td id="available"><strong>${credits(wallet.available)}</strong> credits</td><td id="held">${credits(wallet.held)} credits (${pendingHolds} in flight)</td><td>${credits(wallet.balance)} credits</td></tr></table>
<p class="muted">1 credit = 0.001 USD. Held credits are reserved by requests and tasks still running; they settle to the actual cost.</p></div>
<h2>Ledger (UTC)</h2>
${
  entries.length
    ? html`<table><tr><th>Time</th><th>Kind</th><th>Credits</th><th>Reason</th><th>Hold</th></tr>
${entries.map((e) => html`<tr><td>${when(e.created_at)}</td><td>${e.kind}</td><td class="${e.amount < 0 ? "error" : "ok"}">${e.amount > 0 ? "+" : ""}${credits(e.amount)}</td><td>${e.reason ?? ""}</td><td><code>${e.hold_id ?? ""}</code></td></tr>`)}</table>`
    : html`<p class="muted">No entries yet.</p>`
}`,
        });
      }),
    { session: true },
  );
}
