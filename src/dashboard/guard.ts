import { Elysia } from "elysia";
import { percentDecoded } from "../http/percent";
import { safeEqual } from "../http/tokens";
import type { AppContext } from "../context";
import { randomToken } from "../db/ids";
import { html, htmlResponse, layout, type Raw } from "../pages/layout";
import type { Session, Users } from "./users";
import { smallBodyParser } from "../http/body-parsers";

// What every dashboard request goes through. GET pages need a session (else a redirect to sign in). Every POST
// must (1) come from our own origin — the Origin header, when the browser sends one, must be this gateway's — and
// (2) carry the session's CSRF token in the `_csrf` field. SameSite=Lax on the cookie is a third layer, not the
// only one. Pages are never cached and never framed. A post refused for (1) or for want of a session is refused
// before its body is read (sessionGuard); bodies are at most SMALL_BODY_BYTES.

export const COOKIE = "sy_session";
const COOKIE_PATH = "/dashboard";

export function cookieValue(request: Request, name = COOKIE): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const i = part.indexOf("=");
    // Our cookies hold base64url text (flashCookie encodes anyway): one that does not decode was not set by us,
    // and counts as no cookie, i.e. signed out.
    if (i > 0 && part.slice(0, i).trim() === name) return percentDecoded(part.slice(i + 1).trim()) ?? undefined;
  }
}

/**
 * The fields of a posted form, strings only. Elysia turns a repeated field (`name=a&name=b`) into an array and a
 * multipart file into an object; no form of ours sends either, so such a field counts as missing and the page
 * answers with its usual validation message instead of failing on `.trim()`.
 */
export function formFields(body: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (body && typeof body === "object" && !Array.isArray(body))
    for (const [name, value] of Object.entries(body)) if (typeof value === "string") fields[name] = value;
  return fields;
}

export function sessionCookie(ctx: AppContext, token: string, maxAgeSeconds: number): string {
  const secure = ctx.config.publicBaseUrl.startsWith("https:") ? "; Secure" : "";
  return `${COOKIE}=${token}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

export function clearedCookie(ctx: AppContext): string {
  return sessionCookie(ctx, "", 0);
}

/**
 * A secret to show once after a form post (post → redirect → get): carried to the next GET of `path` in a
 * short-lived cookie that the GET clears, so a reload neither shows it again nor re-submits the form.
 */
export function flashCookie(ctx: AppContext, name: string, value: string, path: string, maxAgeSeconds = 120): string {
  const secure = ctx.config.publicBaseUrl.startsWith("https:") ? "; Secure" : "";
  return `${name}=${encodeURIComponent(value)}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

/** True when the request came from a page of this gateway (or from a non-browser client that sends no Origin). */
export function sameOrigin(ctx: AppContext, request: Request): boolean {
  if (request.headers.get("sec-fetch-site") === "cross-site") return false;
  const origin = request.headers.get("origin");
  if (origin === null) return true; // not a browser form post; the CSRF token still has to match
  // Ours: the public address, or the address this request was sent to (a direct or internal hostname).
  return origin === new URL(ctx.config.publicBaseUrl).origin || origin === new URL(request.url).origin;
}

export function csrfMatches(session: Session, given: unknown): boolean {
  return typeof given === "string" && safeEqual(given, session.csrfToken);
}

export function securityHeaders(nonce: string): Record<string, string> {
  return {
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "content-security-policy": `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'self' 'unsafe-inline'; img-src * data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'`,
  };
}

export interface PageContext {
  session: Session;
  /** A hidden form field with the session's CSRF token; put it in every form that POSTs. */
  csrf: Raw;
  /** The CSP nonce for this response's inline script, if it has one. */
  nonce: string;
}

export type PageBody = { title: string; body: Raw; status?: number; headers?: Record<string, string> };

export function renderPage(p: PageBody & { nonce: string; page?: PageContext }): Response {
  // Signed-in pages get the dashboard navigation and a sign-out form (a POST, so it carries the CSRF token).
  const bar = p.page
    ? html`<form class="inline signout" method="post" action="/dashboard/logout">${p.page.csrf}<span class="muted">${p.page.session.email}</span> <button type="submit">Sign out</button></form>`
    : "";
  return htmlResponse(layout({ title: p.title, signedIn: !!p.page }, html`${bar}${p.body}`), {
    status: p.status ?? 200,
    headers: { ...securityHeaders(p.nonce), ...p.headers },
  });
}

export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, "cache-control": "no-store", ...headers } });
}

export function errorPage(
  status: number,
  title: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return renderPage({
    title,
    body: html`<h1>${title}</h1><p class="error">${message}</p><p><a href="/dashboard">Back to the dashboard</a></p>`,
    status,
    headers,
    nonce: randomToken(12),
  });
}

const sessions = new WeakMap<Request, Promise<Session | null>>();

/** The request's session, looked up once per request (a form post's parse hook asks first, then its handler). */
export function sessionOf(users: Users, request: Request): Promise<Session | null> {
  let session = sessions.get(request);
  if (!session) sessions.set(request, (session = users.session(cookieValue(request))));
  return session;
}

/**
 * `{ session: true }` declares a signed-in page or form. A form post withForm would refuse (from another site, or
 * without a session) is not read: its form counts as empty and withForm answers as it always does; any other body is
 * read up to SMALL_BODY_BYTES. Without this, anyone could make the gateway read a body of MAX_REQUEST_BODY_MB before
 * learning that it has no session. GET pages send a browser without a session to sign in (withSession).
 */
export function sessionGuard(ctx: AppContext, users: Users) {
  // No name: Elysia deduplicates named plugins, and every dashboard instance declares its routes' guard.
  return new Elysia().macro({ session: { parse: [formWorthReading(ctx, users), smallBodyParser(ctx)] } });
}

/** A parse hook: nothing (read on) for a post withForm may accept, else an empty form without reading the body. */
function formWorthReading(ctx: AppContext, users: Users) {
  return async ({ request }: { request: Request }) =>
    sameOrigin(ctx, request) && (await sessionOf(users, request)) !== null ? undefined : {};
}

/** Runs `handler` with the signed-in session, or sends the browser to sign in. */
export async function withSession(
  users: Users,
  request: Request,
  handler: (p: PageContext) => Promise<Response> | Response,
): Promise<Response> {
  const session = await sessionOf(users, request);
  if (!session) {
    const url = new URL(request.url);
    return redirect(`/dashboard/login?next=${encodeURIComponent(url.pathname + url.search)}`);
  }
  return handler({
    session,
    csrf: html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`,
    nonce: randomToken(12),
  });
}

/** Like withSession for form posts: also refuses cross-site posts and posts without the session's CSRF token. */
export async function withForm(
  ctx: AppContext,
  users: Users,
  request: Request,
  form: unknown,
  handler: (p: PageContext, form: Record<string, string>) => Promise<Response> | Response,
): Promise<Response> {
  if (!sameOrigin(ctx, request)) return errorPage(403, "Refused", "This form was sent from another site.");
  const session = await sessionOf(users, request);
  if (!session) return errorPage(401, "Signed out", "Your session has ended. Sign in again.");
  const fields = formFields(form);
  if (!csrfMatches(session, fields._csrf))
    return errorPage(
      403,
      "Refused",
      "The form is missing its security token or it is stale. Reload the page and try again.",
    );
  return handler(
    { session, csrf: html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`, nonce: randomToken(12) },
    fields,
  );
}
