import { Elysia } from "elysia";
import type { AppContext } from "../context";
import type { AuthContext } from "../accounts/service";
import { ApiError } from "./errors";
import { checkFirst, type Caller } from "./before-body";
import { jsonObjectParser, limitedParser, smallBodyParser, SMALL_BODY_BYTES } from "./body-parsers";
import { limitByAddress } from "./by-address";
import { authenticated, keyWithinLimit } from "./protect";
import { bearerToken, safeEqual } from "./tokens";

// Each route declares who may call it: `{ apiKey: true }`, `{ admin: true }` or `{ publicLimit: "bucket" }` (the
// dashboard's `{ session: true }` is in dashboard/guard.ts). A guard refuses its caller before the body is read, so
// each brings the body reader for its callers too: a route's own parse hooks, and its instance's, would run before
// a macro's. Without a body (GET) the check runs in transform, after any transform of the route's own.

/** `check` once per request: as a parse hook when there is a body, in transform when there is none. */
function beforeBody(check: (caller: Caller) => unknown) {
  const passed = new WeakSet<Request>();
  // Destructured: Elysia prepares only the parts of the context a hook names (not cookies, query).
  const once = async ({ request, server }: Caller) => {
    if (passed.has(request)) return;
    await check({ request, server });
    passed.add(request);
  };
  return { parse: checkFirst(once), transform: ({ request, server }: Caller) => once({ request, server }) };
}

function adminTokenCheck(ctx: AppContext) {
  const expected = ctx.config.adminToken;
  return ({ request }: Caller) => {
    if (!expected)
      throw new ApiError(403, "admin_disabled", "The admin API is disabled: start the gateway with ADMIN_TOKEN set.");
    if (!safeEqual(bearerToken(request.headers), expected))
      throw new ApiError(401, "invalid_admin_token", "Missing or wrong admin token.");
  };
}

export function routeGuards(ctx: AppContext) {
  const adminFirst = beforeBody(adminTokenCheck(ctx));
  // The key and its rate limit are checked in transform, before the body's validation (a 401 or 429, never a 422),
  // and handed to the handler by resolve, which runs after it.
  const keys = new WeakMap<Request, AuthContext>();
  // No name: Elysia deduplicates named plugins, and every instance that declares guards needs these.
  return new Elysia().macro({
    /** An API key (401), within its rate limit (429); bodies up to MAX_REQUEST_BODY_MB. Gives the handler `auth`. */
    apiKey: {
      parse: [checkFirst(({ request }) => authenticated(ctx, request.headers)), limitedParser(ctx.config.body)],
      transform: async ({ request, set }) => void keys.set(request, await keyWithinLimit(ctx, request, set.headers)),
      resolve: ({ request }) => ({ auth: keys.get(request)! }),
    },
    /** ADMIN_TOKEN (401, or 403 when unset): a JSON object of at most SMALL_BODY_BYTES. */
    admin: {
      parse: [
        adminFirst.parse,
        jsonObjectParser({ ...ctx.config.body, maxBytes: Math.min(ctx.config.body.maxBytes, SMALL_BODY_BYTES) }),
      ],
      transform: adminFirst.transform,
    },
    /** No key: limited per client address (PUBLIC_RATE_LIMIT) in the named bucket; bodies of SMALL_BODY_BYTES. */
    publicLimit: (bucket: string) => ({ parse: [checkFirst(limitByAddress(ctx, bucket)), smallBodyParser(ctx)] }),
  });
}
