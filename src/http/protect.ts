import { Elysia } from "elysia";
import type { AppContext } from "../context";
import type { AuthContext } from "../accounts/service";
import { ApiError, unauthorized } from "./errors";
import { bearerToken } from "./tokens";
import { retryAfterSeconds } from "../limits/rate-limit";
import { checkBeforeBody } from "./before-body";

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
async function authenticated(ctx: AppContext, headers: Headers): Promise<AuthContext> {
  const key = presentedKey(headers);
  if (!key) throw unauthorized("Missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`.");
  const auth = await ctx.accounts.authenticate(key);
  if (!auth) throw unauthorized("Invalid or revoked API key.");
  if (auth.expiresAt !== null && Date.now() >= auth.expiresAt)
    throw new ApiError(401, "key_expired", `This API key expired at ${new Date(auth.expiresAt).toISOString()}; ask for a new one or for its expiry to be moved.`);
  return auth;
}

export function protect(ctx: AppContext) {
  const def = ctx.config.defaultRateLimit;
  return new Elysia({ name: "protect" }).derive({ as: "scoped" }, async ({ request, set }) => {
    const auth = await authenticated(ctx, request.headers);
    const requests = auth.rateRequests ?? def.requests;
    const windowSeconds = auth.rateWindowSeconds ?? def.windowSeconds;
    const r = await ctx.limiter.limit(auth.keyId, requests, windowSeconds);
    const resetIn = retryAfterSeconds(r.reset);
    set.headers["x-ratelimit-limit"] = String(r.limit);
    set.headers["x-ratelimit-remaining"] = String(r.remaining);
    set.headers["x-ratelimit-reset"] = String(resetIn);
    if (!r.success) {
      throw new ApiError(429, "rate_limit_exceeded", `Rate limit of ${requests} requests per ${windowSeconds} s reached for this key; retry in ${resetIn} s.`, {
        headers: { "retry-after": String(resetIn) },
      });
    }
    return { auth };
  });
}

/**
 * For an instance whose parse hook reads bodies of up to MAX_REQUEST_BODY_MB (the media task routes): a caller
 * without a valid key is refused before its body is read (http/before-body.ts), not after. protect's derive, which
 * runs after parsing, still does the rest (the key's record from the cache this fills, its rate limit). The LLM
 * routes need none of this: they read their bodies in the handler, after protect.
 */
export function keyBeforeBody(ctx: AppContext) {
  return checkBeforeBody(({ request }) => authenticated(ctx, request.headers));
}
