import { parseRateSpec } from "../settings";
import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { randomToken } from "../db/ids";
import { retryAfterSeconds } from "../limits/rate-limit";
import { html } from "../pages/layout";
import { clearedCookie, cookieValue, csrfMatches, errorPage, redirect, renderPage, sameOrigin, sessionCookie } from "./guard";
import { normalizeEmail, type Users } from "./users";

// Sign-in and sign-out. Attempts are rate-limited per email + client address (LOGIN_RATE_LIMIT), so a password
// cannot be guessed quickly for one account from one place; a refused attempt gets a 429 page with retry-after.

function loginPage(opts: { next?: string; email?: string; error?: string; status?: number }) {
  return renderPage({
    title: "Sign in",
    status: opts.status,
    nonce: randomToken(12),
    body: html`<h1>Sign in</h1>
${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ""}
<form method="post" action="/dashboard/login" class="card" style="max-width:26rem">
<input type="hidden" name="next" value="${opts.next ?? ""}">
<p><label>Email<br><input name="email" type="email" autocomplete="username" required value="${opts.email ?? ""}" style="width:100%"></label></p>
<p><label>Password<br><input name="password" type="password" autocomplete="current-password" required style="width:100%"></label></p>
<p><button type="submit">Sign in</button></p></form>
<p class="muted">Accounts and users are created by your operator (admin API or CLI).</p>`,
  });
}

/** Only local dashboard paths: an open redirect would let a link to us bounce users anywhere. */
function safeNext(next: unknown): string {
  return typeof next === "string" && /^\/dashboard(\/[\w\-./?=&%]*)?$/.test(next) && !next.startsWith("//") ? next : "/dashboard";
}

export function loginRoutes(ctx: AppContext, users: Users) {
  const { requests, windowSeconds } = parseRateSpec(ctx.config.raw.LOGIN_RATE_LIMIT!);
  const ttlHours = Number(ctx.config.raw.SESSION_TTL_HOURS);

  return new Elysia({ name: "dashboard-login", detail: { hide: true } })
    .get("/dashboard/login", ({ query }) => loginPage({ next: safeNext(query.next) }))
    .post("/dashboard/login", async ({ request, body, server }) => {
      if (!sameOrigin(ctx, request)) return errorPage(403, "Refused", "This form was sent from another site.");
      const form = (body ?? {}) as Record<string, string>;
      const email = typeof form.email === "string" ? form.email : "";
      const password = typeof form.password === "string" ? form.password : "";
      const ip = server?.requestIP(request)?.address ?? "unknown";
      const limit = await ctx.limiter.limit(`login:${normalizeEmail(email)}|${ip}`, requests, windowSeconds);
      if (!limit.success) {
        const wait = retryAfterSeconds(limit.reset);
        const page = loginPage({ email, next: safeNext(form.next), status: 429, error: `Too many sign-in attempts. Try again in ${wait} seconds.` });
        page.headers.set("retry-after", String(wait));
        return page;
      }
      const user = email && password ? await users.verify(email, password) : null;
      if (!user) {
        ctx.log.info("dashboard sign-in refused", { ip }); // never the email or password
        return loginPage({ email, next: safeNext(form.next), status: 401, error: "Wrong email or password." });
      }
      const { token } = await users.openSession(user.id, ttlHours * 3_600_000);
      ctx.log.info("dashboard sign-in", { user_id: user.id, account_id: user.accountId });
      return redirect(safeNext(form.next), { "set-cookie": sessionCookie(ctx, token, ttlHours * 3600) });
    })
    .post("/dashboard/logout", async ({ request, body }) => {
      if (!sameOrigin(ctx, request)) return errorPage(403, "Refused", "This form was sent from another site.");
      const session = await users.session(cookieValue(request));
      if (session && csrfMatches(session, (body as any)?._csrf)) await users.closeSession(session.id);
      return redirect("/dashboard/login", { "set-cookie": clearedCookie(ctx) });
    });
}
