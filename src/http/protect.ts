import { Elysia } from "elysia";
import type { AppContext } from "../context";
import type { AuthContext } from "../accounts/service";
import { ApiError, unauthorized } from "./errors";
import { bearerToken } from "./tokens";
import { retryAfterSeconds, type LimitResult } from "../limits/rate-limit";

// The guard in front of every protected route: who is calling (API key → account), then how fast they may call
// (sliding window per key). Rate-limit headers go on every answer, refusals carry retry-after in whole seconds.

export function presentedKey(headers: Headers): string | undefined {
  return bearerToken(headers) ?? (headers.get("x-api-key")?.trim() || undefined);
}

/**
 * The caller's key record, or 401 (no key, one unknown or revoked, or past its expiry). Cached by Accounts: a
 * second call is cheap. Expiry is checked on every call against the cached record, so it takes effect to the
 * millisecond, not within the cache's window.
 */
export async function authenticated(ctx: AppContext, headers: Headers): Promise<AuthContext> {
  return keyOf(await ctx.accounts.authenticate(presentedKeyOrRefuse(headers)));
}

function presentedKeyOrRefuse(headers: Headers): string {
  const key = presentedKey(headers);
  if (!key) throw unauthorized("Missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`.");
  return key;
}

function keyOf(auth: AuthContext | null): AuthContext {
  if (!auth) throw unauthorized("Invalid or revoked API key.");
  if (auth.expiresAt !== null && Date.now() >= auth.expiresAt)
    throw new ApiError(
      401,
      "key_expired",
      `This API key expired at ${new Date(auth.expiresAt).toISOString()}; ask for a new one or for its expiry to be moved.`,
    );
  return auth;
}

/**
 * The caller's key record once within its rate limit (else 429); the limit's state goes on `headers`. A cached key
 * under an in-process limit is answered at once, not as a promise: every LLM call takes this path, and each await
 * of a settled promise is a turn of the microtask queue on its way (docs/architecture.md, "Where the time goes").
 * Refusals are thrown, or rejected when the answer is a promise.
 */
export function keyWithinLimit(
  ctx: AppContext,
  request: Request,
  headers: Record<string, unknown>,
): AuthContext | Promise<AuthContext> {
  const found = ctx.accounts.authenticateNow(presentedKeyOrRefuse(request.headers));
  if (found instanceof Promise) return found.then((auth) => withinLimit(ctx, keyOf(auth), headers));
  return withinLimit(ctx, keyOf(found), headers);
}

function withinLimit(
  ctx: AppContext,
  auth: AuthContext,
  headers: Record<string, unknown>,
): AuthContext | Promise<AuthContext> {
  const def = ctx.config.defaultRateLimit;
  const requests = auth.rateRequests ?? def.requests;
  const windowSeconds = auth.rateWindowSeconds ?? def.windowSeconds;
  const counted = ctx.limiter.limitNow?.(auth.keyId, requests, windowSeconds);
  if (counted) return limited(auth, counted, requests, windowSeconds, headers);
  return ctx.limiter
    .limit(auth.keyId, requests, windowSeconds)
    .then((limit) => limited(auth, limit, requests, windowSeconds, headers));
}

function limited(
  auth: AuthContext,
  limit: LimitResult,
  requests: number,
  windowSeconds: number,
  headers: Record<string, unknown>,
): AuthContext {
  const resetIn = retryAfterSeconds(limit.reset);
  headers["x-ratelimit-limit"] = String(limit.limit);
  headers["x-ratelimit-remaining"] = String(limit.remaining);
  headers["x-ratelimit-reset"] = String(resetIn);
  if (!limit.success) {
    throw new ApiError(
      429,
      "rate_limit_exceeded",
      `Rate limit of ${requests} requests per ${windowSeconds} s reached for this key; retry in ${resetIn} s.`,
      {
        headers: { "retry-after": String(resetIn) },
      },
    );
  }
  return auth;
}

/**
 * keyWithinLimit for every later route of an instance, for routes that read their bodies in the handler (the LLM
 * routes, /v1/credits): nothing is read before it runs. Other routes declare `{ apiKey: true }` (http/guards.ts).
 */
export function protect(ctx: AppContext) {
  return new Elysia({ name: "protect" }).derive({ as: "scoped" }, async ({ request, set }) => ({
    auth: await keyWithinLimit(ctx, request, set.headers),
  }));
}
