import { dashboardSettingsOf } from "./settings";
import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { randomToken } from "../db/ids";
import { retryAfterSeconds, type LimitResult } from "../limits/rate-limit";
import { html } from "../pages/layout";
import { clientAddress, limitKeyOf } from "../http/client-address";
import {
  clearedCookie,
  csrfMatches,
  errorPage,
  formFields,
  redirect,
  renderPage,
  sameOrigin,
  sessionCookie,
  sessionGuard,
  sessionOf,
} from "./guard";
import { normalizeEmail, type Users } from "./users";
import { smallBodyParser } from "../http/body-parsers";
import type { Caller } from "../http/before-body";

// Sign-in and sign-out. A refused attempt gets the sign-in page with 429 and retry-after. Three limits:
// - per email + client address (LOGIN_RATE_LIMIT): a password cannot be guessed quickly for one account from one
//   place. Keyed by address too, so an attacker elsewhere cannot lock the account's owner out (behind a proxy that
//   needs TRUSTED_PROXY_HOPS, else every client shares the proxy's address: see http/client-address.ts);
// - per client address across all emails (LOGIN_ADDRESS_RATE_LIMIT): one place cannot try one password on many
//   accounts;
// - password checks at once (MAX_PASSWORD_CHECKS): each is an argon2id verify (Bun's default: 64 MiB, ~0.1-0.2 s
//   of a core), so a flood from many addresses is refused at once instead of queueing up CPU time and memory.
// A cross-site post, and one from an address over its limit, is refused before its body is read (the form counts as
// empty); the per-email limit needs the email, so it comes after. Bodies are at most SMALL_BODY_BYTES.

const MAX_PASSWORD_CHECKS = 4;

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
  return typeof next === "string" && /^\/dashboard(\/[\w\-./?=&%]*)?$/.test(next) && !next.startsWith("//")
    ? next
    : "/dashboard";
}

export function loginRoutes(ctx: AppContext, users: Users) {
  const { sessionTtlHours } = dashboardSettingsOf(ctx.config);
  const limits = signInLimits(ctx, users);
  const formBody = smallBodyParser(ctx);

  // Sign-in names its parse hooks (the address limit before the body); the instance has none, since they would
  // run before a route's own.
  return new Elysia({ name: "dashboard-login", detail: { hide: true } })
    .use(sessionGuard(ctx, users))
    .get("/dashboard/login", ({ query }) => loginPage({ next: safeNext(query.next) }))
    .post(
      "/dashboard/login",
      ({ request, body, server }) => signIn(ctx, users, limits, sessionTtlHours, { request, server }, body),
      { parse: [limits.signInWorthReading, formBody] },
    )
    .post(
      "/dashboard/logout",
      async ({ request, body }) => {
        if (!sameOrigin(ctx, request)) return errorPage(403, "Refused", "This form was sent from another site.");
        const session = await sessionOf(users, request);
        if (session && csrfMatches(session, formFields(body)._csrf)) await users.closeSession(session.id);
        return redirect("/dashboard/login", { "set-cookie": clearedCookie(ctx) });
      },
      { session: true },
    );
}

type SignInLimits = ReturnType<typeof signInLimits>;

/** The three limits above, counted per app: each gateway (and each test gateway) has its own. */
function signInLimits(ctx: AppContext, users: Users) {
  const { perEmail, perAddress } = dashboardSettingsOf(ctx.config);
  const trustedHops = ctx.config.trustedProxyHops;
  let checksRunning = 0;
  const addressOf = ({ request, server }: Caller) =>
    clientAddress(request, server?.requestIP(request)?.address, trustedHops);
  // Counted once per attempt: asked first by the parse hook, then by the handler.
  const fromAddress = new WeakMap<Request, Promise<LimitResult>>();
  const addressLimit = (caller: Caller) => {
    let r = fromAddress.get(caller.request);
    // an IPv6 client by its /64: it can pick any address in it for each attempt
    if (!r)
      fromAddress.set(
        caller.request,
        (r = ctx.limiter.limit(
          `login-address:${limitKeyOf(addressOf(caller))}`,
          perAddress.requests,
          perAddress.windowSeconds,
        )),
      );
    return r;
  };
  return {
    addressOf,
    addressLimit,
    /** The parse hook: a cross-site post, or one from an address over its limit, is not worth reading. */
    signInWorthReading: async ({ request, server }: Caller) =>
      sameOrigin(ctx, request) && (await addressLimit({ request, server })).success ? undefined : {},
    emailLimit: (email: string, ip: string) =>
      ctx.limiter.limit(`login:${normalizeEmail(email)}|${limitKeyOf(ip)}`, perEmail.requests, perEmail.windowSeconds),
    checksFull: () => checksRunning >= MAX_PASSWORD_CHECKS,
    countedVerify: async (email: string, password: string) => {
      checksRunning++;
      try {
        return await users.verify(email, password);
      } finally {
        checksRunning--;
      }
    },
  };
}

async function signIn(
  ctx: AppContext,
  users: Users,
  limits: SignInLimits,
  ttlHours: number,
  caller: Caller,
  body: unknown,
) {
  if (!sameOrigin(ctx, caller.request)) return errorPage(403, "Refused", "This form was sent from another site.");
  const form = formFields(body);
  const email = form.email ?? "";
  const password = form.password ?? "";
  const ip = limits.addressOf(caller);
  const byAddress = await limits.addressLimit(caller);
  if (!byAddress.success) return tooMany(form, email, retryAfterSeconds(byAddress.reset));
  const forEmail = await limits.emailLimit(email, ip);
  if (!forEmail.success) return tooMany(form, email, retryAfterSeconds(forEmail.reset));
  if (email && password && limits.checksFull()) return tooMany(form, email, 1);
  const user = email && password ? await limits.countedVerify(email, password) : null;
  if (!user) {
    ctx.log.info("dashboard sign-in refused", { ip }); // never the email or password
    return loginPage({ email, next: safeNext(form.next), status: 401, error: "Wrong email or password." });
  }
  const { token } = await users.openSession(user.id, ttlHours * 3_600_000);
  ctx.log.info("dashboard sign-in", { user_id: user.id, account_id: user.accountId });
  return redirect(safeNext(form.next), { "set-cookie": sessionCookie(ctx, token, ttlHours * 3600) });
}

function tooMany(form: Record<string, string>, email: string, wait: number) {
  const page = loginPage({
    email,
    next: safeNext(form.next),
    status: 429,
    error: `Too many sign-in attempts. Try again in ${wait} second${wait === 1 ? "" : "s"}.`,
  });
  page.headers.set("retry-after", String(wait));
  return page;
}
