import type { AppContext } from "../context";
import { retryAfterSeconds } from "../limits/rate-limit";
import { ApiError } from "./errors";
import { clientAddress, limitKeyOf } from "./client-address";
import type { Caller } from "./before-body";

// The limit of the public endpoints that do work on a caller's behalf without a key (the media price estimate,
// upstreams' completion notices): per client address (TRUSTED_PROXY_HOPS), PUBLIC_RATE_LIMIT, in Redis when
// configured like every other limit; an IPv6 client counts by its /64 (client-address.ts limitKeyOf). Without it
// anyone could keep the gateway's CPU or database busy for free.

export function limitByAddress(ctx: AppContext, bucket: string) {
  const { requests, windowSeconds } = ctx.config.publicRateLimit;
  const hops = ctx.config.trustedProxyHops;
  return async ({ request, server }: Caller) => {
    const ip = clientAddress(request, server?.requestIP(request)?.address, hops);
    const limit = await ctx.limiter.limit(`public:${bucket}:${limitKeyOf(ip)}`, requests, windowSeconds);
    if (limit.success) return;
    const wait = retryAfterSeconds(limit.reset);
    throw new ApiError(
      429,
      "rate_limit_exceeded",
      `Too many requests from your address (${requests} per ${windowSeconds} s); retry in ${wait} s.`,
      {
        headers: { "retry-after": String(wait) },
      },
    );
  };
}
