import { Elysia } from "elysia";
import { KEY_LIMITS } from "../accounts/model";
import { BUDGET_PERIODS, parseKeyPolicy } from "../accounts/policy";
import type { KeyView } from "../accounts/service";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { html } from "../pages/layout";
import { errorPage, redirect, renderPage, sessionGuard, withForm, withSession, type PageContext } from "./guard";
import { refuseLooserThanDefault } from "./keys";
import type { Users } from "./users";

// Settings → API Keys → Edit: a customer changes one of their own live keys. The form shows every field filled in and
// sends them all; an empty field is the default (no cap, every model, never expires). The fields become the admin
// API's JSON shape and go through the same parseKeyPolicy, then the dashboard's own rule: limits no looser than the
// gateway's defaults (budgets, models and expiry only ever restrict, so any value is allowed).

const PATH = "/dashboard/settings/api-keys";
const PERIOD_LABELS: Record<(typeof BUDGET_PERIODS)[number], string> = {
  day: "Per day (UTC)",
  week: "Per week (from Monday, UTC)",
  month: "Per month (UTC)",
  lifetime: "In its lifetime",
};

function editPage(ctx: AppContext, signedIn: PageContext, k: KeyView, opts: { error?: string; status?: number } = {}) {
  const def = ctx.config.defaultRateLimit;
  const expires = k.expires_at ? k.expires_at.slice(0, 16) : "";
  return renderPage({
    title: `Edit key ${k.name}`,
    nonce: signedIn.nonce,
    page: signedIn,
    status: opts.status,
    body: html`<h1>Settings → API Keys → <code>${k.prefix}…</code></h1>
${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ""}
<form method="post" action="${PATH}/${k.id}" class="card" id="edit-key">${signedIn.csrf}
<p><label>Name <input name="name" required maxlength="200" value="${k.name}"></label></p>
<p>Rate limit (empty for the default ${def.requests} requests per ${def.windowSeconds} s):
<label><input name="requests" type="number" min="${KEY_LIMITS.rateRequests.min}" max="${def.requests}" value="${k.rate_limit?.requests ?? ""}" style="width:7em"> requests</label> per
<label><input name="window_seconds" type="number" min="${KEY_LIMITS.rateWindowSeconds.min}" max="${KEY_LIMITS.rateWindowSeconds.max}" value="${k.rate_limit?.window_seconds ?? ""}" style="width:6em"> seconds</label></p>
<p><label>Concurrent media tasks (empty for the default ${ctx.config.defaultMaxConcurrentTasks}) <input name="max_concurrent_tasks" type="number" min="${KEY_LIMITS.maxConcurrentTasks.min}" max="${ctx.config.defaultMaxConcurrentTasks}" value="${k.max_concurrent_tasks ?? ""}" style="width:6em"></label></p>
<p><label>Models it may call, comma-separated (<code>claude-*</code> for a prefix; empty for every model) <input name="models" value="${k.models?.join(", ") ?? ""}" style="width:28em"></label></p>
<p><label>Expires at (UTC; empty for never) <input name="expires_at" type="datetime-local" value="${expires}"></label></p>
<fieldset><legend>Budget in credits (empty for no cap)</legend>
${BUDGET_PERIODS.map((period) => html`<p><label>${PERIOD_LABELS[period]} <input name="budget_${period}" inputmode="decimal" value="${k.budget[period] ?? ""}" style="width:9em"></label></p>`)}
</fieldset>
<p><button type="submit">Save</button> <a href="${PATH}">Cancel</a></p></form>`,
  });
}

/** The form's fields in the admin API's JSON shape: an empty field is null (the default). */
function formToPolicy(form: Record<string, string>): Record<string, unknown> {
  const value = (name: string) => (form[name] ?? "").trim();
  const orNull = (name: string) => value(name) || null;
  const requests = value("requests");
  const window = value("window_seconds");
  // A datetime-local input has no zone: the page says UTC.
  const expires = value("expires_at");
  return {
    name: form.name ?? "",
    rate_limit: requests || window ? { requests, window_seconds: window } : null,
    max_concurrent_tasks: orNull("max_concurrent_tasks"),
    models: value("models")
      ? value("models")
          .split(",")
          .map((m) => m.trim())
      : null,
    expires_at: expires ? (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(expires) ? `${expires}Z` : expires) : null,
    budget: Object.fromEntries(BUDGET_PERIODS.map((period) => [period, orNull(`budget_${period}`)])),
  };
}

export function keyEditRoutes(ctx: AppContext, users: Users) {
  const liveKey = async (accountId: string, keyId: string) =>
    (await ctx.accounts.listKeys(accountId)).find((k) => k.id === keyId && !k.revoked_at);
  return new Elysia({ name: "dashboard-key-edit", detail: { hide: true } })
    .use(sessionGuard(ctx, users))
    .get(
      `${PATH}/:keyId`,
      ({ request, params }) =>
        withSession(users, request, async (signedIn) => {
          const key = await liveKey(signedIn.session.accountId, params.keyId);
          return key ? editPage(ctx, signedIn, key) : errorPage(404, "Not found", "No such live key in this account.");
        }),
      { session: true },
    )
    .post(
      `${PATH}/:keyId`,
      ({ request, body, params }) =>
        withForm(ctx, users, request, body, async (signedIn, form) => {
          const accountId = signedIn.session.accountId;
          const key = await liveKey(accountId, params.keyId); // scoped by account: another account's key is not found
          if (!key) return errorPage(404, "Not found", "No such live key in this account.");
          try {
            const change = parseKeyPolicy(formToPolicy(form), Date.now());
            refuseLooserThanDefault(
              ctx,
              change.rateLimit?.requests,
              change.rateLimit?.windowSeconds,
              change.maxConcurrentTasks ?? undefined,
            );
            await ctx.accounts.updateKey(accountId, key.id, change);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            return editPage(ctx, signedIn, key, { error: e.message, status: e.status });
          }
          ctx.log.info("dashboard key changed", {
            account_id: accountId,
            key_id: key.id,
            user_id: signedIn.session.userId,
          });
          return redirect(PATH);
        }),
      { session: true },
    );
}
