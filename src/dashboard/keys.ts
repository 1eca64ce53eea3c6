import { Elysia } from "elysia";
import { KEY_LIMITS } from "../accounts/model";
import type { KeyView } from "../accounts/service";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { html, raw } from "../pages/layout";
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
import { liveKeyIdOf } from "./service";
import type { Users } from "./users";

// Settings → API Keys: create (name and per-key limits; the key is shown once with a copy button), list by prefix,
// revoke; editing a key is key-edit.ts. After creating, the browser is redirected (a reload must not create a second key) and the new key rides
// to that one GET in a flash cookie, never in a URL; the GET shows it if it is a live key of this account.

export function copyScript(nonce: string) {
  // The one script the dashboard needs: copy a secret shown once. Nonce'd for the page's Content-Security-Policy.
  return raw(`<script nonce="${nonce}">document.addEventListener("click",function(e){var b=e.target.closest("[data-copy]");if(!b)return;
var v=document.getElementById(b.getAttribute("data-copy")).textContent;navigator.clipboard.writeText(v).then(function(){b.textContent="Copied"},function(){b.textContent="Select and copy"})});</script>`);
}

function keysPage(
  ctx: AppContext,
  signedIn: PageContext,
  keys: KeyView[],
  opts: { created?: KeyView & { key: string }; error?: string; status?: number },
) {
  const def = ctx.config.defaultRateLimit;
  const limits = (k: KeyView) =>
    `${k.rate_limit ? `${k.rate_limit.requests} / ${k.rate_limit.window_seconds} s` : `default (${def.requests} / ${def.windowSeconds} s)`}, ` +
    `${k.max_concurrent_tasks ?? `default (${ctx.config.defaultMaxConcurrentTasks})`} concurrent tasks` +
    (k.models ? `; models ${k.models.join(", ")}` : "") +
    (Object.keys(k.budget).length
      ? `; budget ${Object.entries(k.budget)
          .map(([period, amount]) => `${amount} credits per ${period}`)
          .join(", ")}`
      : "") +
    (k.expires_at ? `; expires ${k.expires_at.slice(0, 16).replace("T", " ")} UTC` : "");
  return renderPage({
    title: "API Keys",
    nonce: signedIn.nonce,
    page: signedIn,
    status: opts.status,
    body: html`<h1>Settings → API Keys</h1>
${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ""}
${
  opts.created
    ? html`<div class="card" id="new-key-card"><strong>New key “${opts.created.name}”.</strong> Copy it now: it is shown only this once.
<pre><code id="new-key">${opts.created.key}</code></pre><button type="button" data-copy="new-key">Copy</button>
<p class="muted">Use it from servers only, as <code>Authorization: Bearer …</code> or <code>x-api-key: …</code>; never in browser or mobile code.</p></div>${copyScript(signedIn.nonce)}`
    : ""
}
<form method="post" action="/dashboard/settings/api-keys" class="card">${signedIn.csrf}
<h2>Create a key</h2>
<p><label>Name <input name="name" required maxlength="200" placeholder="e.g. production server"></label></p>
<p class="muted">A key may have stricter limits than the default; for higher ones, ask the gateway's operator.</p>
<p>Rate limit (empty for the default ${def.requests} requests per ${def.windowSeconds} s):
<label><input name="requests" type="number" min="${KEY_LIMITS.rateRequests.min}" max="${def.requests}" style="width:7em"> requests</label> per
<label><input name="window_seconds" type="number" min="${KEY_LIMITS.rateWindowSeconds.min}" max="${KEY_LIMITS.rateWindowSeconds.max}" style="width:6em"> seconds</label></p>
<p><label>Concurrent media tasks (empty for the default ${ctx.config.defaultMaxConcurrentTasks}) <input name="max_concurrent_tasks" type="number" min="${KEY_LIMITS.maxConcurrentTasks.min}" max="${ctx.config.defaultMaxConcurrentTasks}" style="width:6em"></label></p>
<p><button type="submit">Create key</button></p></form>
<h2>Keys</h2>
${
  keys.length
    ? html`<table><tr><th>Name</th><th>Key</th><th>Limits</th><th>Created (UTC)</th><th>Last used</th><th>Status</th><th></th></tr>
${keys.map(
  (
    k,
  ) => html`<tr data-key-id="${k.id}"><td>${k.name}</td><td><code>${k.prefix}…</code></td><td>${limits(k)}</td><td>${k.created_at.slice(0, 19).replace("T", " ")}</td>
<td>${k.last_used_at?.slice(0, 19).replace("T", " ") ?? "—"}</td><td>${k.revoked_at ? html`<span class="error">revoked</span>` : html`<span class="ok">active</span>`}</td>
<td>${k.revoked_at ? "" : html`<a href="/dashboard/settings/api-keys/${k.id}">Edit</a> <form class="inline" method="post" action="/dashboard/settings/api-keys/${k.id}/revoke">${signedIn.csrf}<button type="submit">Revoke</button></form>`}</td></tr>`,
)}</table>`
    : html`<p class="muted">No keys yet.</p>`
}`,
  });
}

const FLASH = "sy_new_key";
const KEYS_PATH = "/dashboard/settings/api-keys";

/** An optional whole number within the same bounds the admin API's schema enforces (KEY_LIMITS). */
function limitField(v: string | undefined, name: string, bounds: { min: number; max: number }): number | undefined {
  if (v === undefined || v.trim() === "") return undefined;
  const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
  if (!(n >= bounds.min && n <= bounds.max))
    throw new ApiError(
      422,
      "invalid_request",
      `${name} must be a whole number from ${bounds.min} to ${bounds.max.toLocaleString("en-US")}.`,
    );
  return n;
}

/**
 * A customer's own key may be stricter than the gateway's default limits, never looser: higher limits are the
 * operator's to grant (admin API, CLI), on request. A rate limit is looser when it allows a larger burst (more
 * requests) or a higher average rate (requests per second) than the default.
 */
export function refuseLooserThanDefault(
  ctx: AppContext,
  requests: number | undefined,
  windowSeconds: number | undefined,
  tasks: number | undefined,
): void {
  const def = ctx.config.defaultRateLimit;
  const maxTasks = ctx.config.defaultMaxConcurrentTasks;
  const looserRate =
    requests !== undefined &&
    windowSeconds !== undefined &&
    (requests > def.requests || requests * def.windowSeconds > def.requests * windowSeconds);
  if (looserRate || (tasks !== undefined && tasks > maxTasks)) {
    throw new ApiError(
      422,
      "invalid_request",
      `A key's own limits may be stricter than the default (${def.requests} requests per ${def.windowSeconds} s, ${maxTasks} concurrent media tasks), not looser. For higher limits, ask the gateway's operator.`,
    );
  }
}

export function keysRoutes(ctx: AppContext, users: Users) {
  return new Elysia({ name: "dashboard-keys", detail: { hide: true } })
    .use(sessionGuard(ctx, users))
    .get(KEYS_PATH, ({ request }) => withSession(users, request, (signedIn) => keysWithFlash(ctx, signedIn, request)), {
      session: true,
    })
    .post(
      KEYS_PATH,
      ({ request, body }) =>
        withForm(ctx, users, request, body, (signedIn, form) => createKeyFromForm(ctx, signedIn, form)),
      { session: true },
    )
    .post(
      `${KEYS_PATH}/:keyId/revoke`,
      ({ request, body, params }) =>
        withForm(ctx, users, request, body, async (signedIn) => {
          // revokeKey is scoped by account: a key id from another account is simply not found.
          try {
            await ctx.accounts.revokeKey(signedIn.session.accountId, params.keyId);
          } catch (e) {
            if (e instanceof ApiError) return errorPage(e.status, "Not revoked", e.message);
            throw e;
          }
          ctx.log.info("dashboard key revoked", {
            account_id: signedIn.session.accountId,
            key_id: params.keyId,
            user_id: signedIn.session.userId,
          });
          return redirect(KEYS_PATH);
        }),
      { session: true },
    );
}

/** The keys page; a key just created (in the flash cookie) is shown once if it is a live key of this account. */
async function keysWithFlash(ctx: AppContext, signedIn: PageContext, request: Request) {
  const keys = await ctx.accounts.listKeys(signedIn.session.accountId);
  const flashed = cookieValue(request, FLASH);
  if (!flashed) return keysPage(ctx, signedIn, keys, {});
  const createdId = await liveKeyIdOf(ctx, signedIn.session.accountId, flashed);
  const view = createdId && keys.find((k) => k.id === createdId);
  const page = keysPage(ctx, signedIn, keys, { created: view ? { ...view, key: flashed } : undefined });
  page.headers.set("set-cookie", flashCookie(ctx, FLASH, "", KEYS_PATH, 0));
  return page;
}

/** Creates a key from the form and redirects to the page that shows it; a refused form gets the page with why. */
async function createKeyFromForm(ctx: AppContext, signedIn: PageContext, form: Record<string, string>) {
  const accountId = signedIn.session.accountId;
  try {
    const created = await ctx.accounts.createKey(accountId, keyFields(ctx, form));
    ctx.log.info("dashboard key created", {
      account_id: accountId,
      key_id: created.id,
      user_id: signedIn.session.userId,
    });
    return redirect(KEYS_PATH, { "set-cookie": flashCookie(ctx, FLASH, created.key, KEYS_PATH) });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return keysPage(ctx, signedIn, await ctx.accounts.listKeys(accountId), {
      error: e.message,
      status: e.status,
    });
  }
}

/** The new key's name and limits from the form, or a 422 saying what is wrong. */
function keyFields(ctx: AppContext, form: Record<string, string>) {
  const name = (form.name ?? "").trim();
  if (!name || name.length > 200)
    throw new ApiError(422, "invalid_request", "Give the key a name (up to 200 characters).");
  const rateRequests = limitField(form.requests, "Requests", KEY_LIMITS.rateRequests);
  const rateWindowSeconds = limitField(form.window_seconds, "Seconds", KEY_LIMITS.rateWindowSeconds);
  const maxConcurrentTasks = limitField(
    form.max_concurrent_tasks,
    "Concurrent media tasks",
    KEY_LIMITS.maxConcurrentTasks,
  );
  if ((rateRequests === undefined) !== (rateWindowSeconds === undefined))
    throw new ApiError(
      422,
      "invalid_request",
      "Give both the number of requests and the window in seconds, or neither.",
    );
  refuseLooserThanDefault(ctx, rateRequests, rateWindowSeconds, maxConcurrentTasks);
  return { name, rateRequests, rateWindowSeconds, maxConcurrentTasks };
}
