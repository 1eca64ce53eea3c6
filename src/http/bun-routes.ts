import type { AppContext } from "../context";
import type { AuthContext } from "../accounts/service";
import { logRequest } from "../ops/routes";
import { errorAnswer, errorCodeOf, errorResponse, newRequestMark, refuseNul } from "./base";
import { keyWithinLimit } from "./protect";

// The hottest routes (the LLM calls) are served by Bun's own router, without Elysia's lifecycle around each request
// (docs/architecture.md, "Where the time goes"). Such a route does what an Elysia route behind `protect()` gets from
// base.ts, protect.ts and ops/routes.ts, with the same functions in the same order: a request id on every answer,
// the key and its rate limit, every error in the caller's protocol, the request metrics and access log line. Elysia
// still declares the same paths (the API reference, and whatever Bun's router passes on: other methods, a trailing
// slash), with handlers that share the route's work.

/** What a keyed route needs of Bun's server: the per-request idle timeout (llm/timeouts.ts). */
export interface BunServer {
  timeout(request: Request, seconds: number): void;
}

export type BunRoute = (request: Request, server: BunServer) => Promise<Response>;

/** The route's work once the caller is known: `headers` (request ids, rate-limit state) go on its answer. */
export type KeyedWork = (
  request: Request,
  auth: AuthContext,
  headers: Record<string, string>,
  server: BunServer | null,
) => Promise<Response>;

/** `work` behind the key guard, as a Bun route handler for the fixed path `route`. */
export function keyedRoute(ctx: AppContext, route: string, work: KeyedWork): BunRoute {
  return async (request, server) => {
    const mark = newRequestMark();
    const headers: Record<string, string> = { "x-request-id": mark.id, "request-id": mark.id };
    let answer: Response;
    try {
      refuseNul(request);
      const checked = keyWithinLimit(ctx, request, headers);
      const auth = checked instanceof Promise ? await checked : checked; // a cached key: no wait (protect.ts)
      answer = await work(request, auth, headers, server);
    } catch (e) {
      const error = errorAnswer(ctx.log, errorCodeOf(e), e, request, route, mark.id);
      answer = errorResponse(route, error, mark.id, headers);
    }
    logRequest(ctx, mark, request.method, route, route, answer.status);
    return answer;
  };
}
