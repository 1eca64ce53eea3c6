import { Elysia } from "elysia";

// Checks that must pass before a request's body is read. Elysia parses a body (with body-parsers.ts's parse hook)
// before transform, derive and beforeHandle, so a guard in any of those ran only once the whole body had been
// received and parsed: a caller without the admin token, or an address over its limit, made the gateway read and
// hold up to MAX_REQUEST_BODY_MB before being refused. A check given here runs as a parse hook ahead of the one that
// reads (parse hooks run in the order they were added: use this before limitedParser), and in transform for a request
// that is not parsed (GET, HEAD), once per request either way. It refuses by throwing an ApiError (from a parse hook
// it reaches the error mapper inside Elysia's ParseError, which http/base.ts unwraps).

export interface Caller {
  request: Request;
  server: { requestIP(r: Request): { address: string } | null } | null;
}

/** `check` before any body is read, for every route of the instance that uses it. */
export function checkBeforeBody(check: (c: Caller) => unknown) {
  const passed = new WeakSet<Request>();
  // Destructured, not passed on whole: Elysia reads which parts of the context a hook uses from its parameters, and
  // would otherwise prepare all of them (cookies, query) for every route.
  const once = async ({ request, server }: Caller) => {
    if (passed.has(request)) return;
    await check({ request, server });
    passed.add(request);
  };
  // No name: Elysia deduplicates named plugins, and each instance that uses this one needs it.
  return new Elysia()
    .onParse({ as: "scoped" }, async ({ request, server }) => {
      await once({ request, server });
      return undefined; // not a body: the next parse hook reads it
    })
    .onTransform({ as: "scoped" }, ({ request, server }) => once({ request, server }));
}

/** `check` as a parse hook of one route, for its own `parse` list ahead of the parser that reads its body. */
export function checkFirst(check: (c: Caller) => unknown) {
  return async ({ request, server }: Caller) => {
    await check({ request, server });
    return undefined; // not a body: the next parse hook reads it
  };
}
