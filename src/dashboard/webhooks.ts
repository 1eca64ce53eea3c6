import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { html } from "../pages/layout";
import { when } from "./format";
import {
  cookieValue,
  errorPage,
  flashCookie,
  redirect,
  renderPage,
  sessionGuard,
  withForm,
  withSession,
  type PageContext,
} from "./guard";
import { copyScript } from "./keys";
import { queueRedelivery, recentDeliveries } from "./service";
import type { Users } from "./users";

// Settings → Webhooks: generate or rotate the signing key (shown once, via redirect + flash cookie as on API Keys),
// recent callback deliveries, redeliver.
// Redelivery only queues: it inserts a new `pending` row into the callback outbox for the task, and the media
// engine's callback worker sends pending rows (signing them as /auth.md describes). attempt = 1: a manual
// redelivery starts a fresh series, so the worker's retry budget applies to it again.

const RECENT = 50;
const FLASH = "sy_new_webhook_key";

async function webhooksPage(ctx: AppContext, signedIn: PageContext, opts: { newKey?: string; notice?: string }) {
  const accountId = signedIn.session.accountId;
  const account = await ctx.accounts.getAccount(accountId);
  const deliveries = await recentDeliveries(ctx, accountId, RECENT);
  const hasKey = account?.webhook_secret != null;
  return renderPage({
    title: "Webhooks",
    nonce: signedIn.nonce,
    page: signedIn,
    body: html`<h1>Settings → Webhooks</h1>
${opts.notice ? html`<p class="ok" role="status">${opts.notice}</p>` : ""}
${
  opts.newKey
    ? html`<div class="card"><strong>New signing key.</strong> Copy it now: it is shown only this once. The previous key (if any) no longer verifies.
<pre><code id="new-webhook-key">${opts.newKey}</code></pre><button type="button" data-copy="new-webhook-key">Copy</button></div>${copyScript(signedIn.nonce)}`
    : ""
}
<div class="card"><h2>Signing key</h2>
<p>${hasKey ? "A signing key is set: every callback carries X-Webhook-Timestamp and X-Webhook-Signature." : "No signing key yet: callbacks are sent unsigned."}
See <a href="/auth.md">/auth.md</a> for how to verify a callback.</p>
<form method="post" action="/dashboard/settings/webhooks/key">${signedIn.csrf}<button type="submit">${hasKey ? "Rotate signing key" : "Generate signing key"}</button></form></div>
<h2>Recent callback deliveries</h2>
${
  deliveries.length
    ? html`<table><tr><th>Time (UTC)</th><th>Task</th><th>URL</th><th>Attempt</th><th>State</th><th>HTTP</th><th>Error</th><th>ms</th><th></th></tr>
${deliveries.map(
  (
    d,
  ) => html`<tr><td>${when(d.created_at)}</td><td><code>${d.task_id}</code></td><td>${d.url}</td><td>${d.attempt}</td><td>${d.state}</td>
<td>${d.status_code ?? ""}</td><td>${d.error ?? ""}</td><td>${d.duration_ms ?? ""}</td>
<td><form class="inline" method="post" action="/dashboard/settings/webhooks/deliveries/${d.id}/redeliver">${signedIn.csrf}<button type="submit">Redeliver</button></form></td></tr>`,
)}</table>`
    : html`<p class="muted">No callbacks yet. They appear here when media tasks created with a callback URL finish.</p>`
}`,
  });
}

export function webhooksRoutes(ctx: AppContext, users: Users) {
  const path = "/dashboard/settings/webhooks";
  return new Elysia({ name: "dashboard-webhooks", detail: { hide: true } })
    .use(sessionGuard(ctx, users))
    .get(
      path,
      ({ request, query }) =>
        withSession(users, request, async (signedIn) => {
          const notice = query.redelivered ? `Redelivery of task ${query.redelivered} queued.` : undefined;
          const flashed = cookieValue(request, FLASH);
          if (!flashed) return webhooksPage(ctx, signedIn, { notice });
          // Shown only while it is still the account's current key.
          const current = await ctx.accounts.webhookSecret(signedIn.session.accountId);
          const page = await webhooksPage(ctx, signedIn, { notice, newKey: current === flashed ? flashed : undefined });
          page.headers.set("set-cookie", flashCookie(ctx, FLASH, "", path, 0));
          return page;
        }),
      { session: true },
    )
    .post(
      `${path}/key`,
      ({ request, body }) =>
        withForm(ctx, users, request, body, async (signedIn) => {
          const { key } = await ctx.accounts.rotateWebhookKey(signedIn.session.accountId);
          ctx.log.info("dashboard webhook key rotated", {
            account_id: signedIn.session.accountId,
            user_id: signedIn.session.userId,
          });
          return redirect(path, { "set-cookie": flashCookie(ctx, FLASH, key, path) });
        }),
      { session: true },
    )
    .post(
      `${path}/deliveries/:id/redeliver`,
      ({ request, body, params }) =>
        withForm(ctx, users, request, body, async (signedIn) => {
          const accountId = signedIn.session.accountId;
          const queued = await queueRedelivery(ctx, accountId, params.id);
          if (queued === "not_found") return errorPage(404, "Not found", "No such delivery on this account.");
          if (queued === "not_finished")
            return errorPage(409, "Not finished", "This task has not finished yet; its callback is sent when it does.");
          ctx.log.info("dashboard callback redelivery queued", {
            account_id: accountId,
            task_id: queued.taskId,
            user_id: signedIn.session.userId,
          });
          return redirect(`${path}?redelivered=${encodeURIComponent(queued.taskId)}`);
        }),
      { session: true },
    );
}
