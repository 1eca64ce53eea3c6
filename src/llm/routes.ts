// The LLM routes: the four protocols' endpoints (every LLM on the three LLM ones: providers.ts says how each call is
// forwarded) plus Anthropic's free count_tokens, behind the key guard, and the caller's usage records. Everything
// per-provider and per-protocol is built here once, at startup.

import { Elysia, type DocumentDecoration } from "elysia";
import type { AppContext } from "../context";
import { protect } from "../http/protect";
import { onGraceOver } from "../ops/shutdown";
import { protocols, type LlmProtocol } from "./protocols/index";
import { buildProviders } from "./providers";
import { handleLlm, type LlmDeps } from "./proxy";
import { KeyBudgets } from "../accounts/key-budgets";
import { IDEMPOTENCY_HEADER, Idempotency } from "../http/idempotency";
import { idempotentLlm } from "./idempotent";
import { cutStreams } from "./pump";
import { listUsage, UsageList, UsageQuery, usageCsv } from "./usage-api";
import { usageSummary, UsageSummary, UsageSummaryQuery } from "./usage-summary";
import { connectionTimeouts, llmTimeoutsOf, type IdleTimeouts } from "./timeouts";
import type { AuthContext } from "../accounts/service";
import { llmDoc } from "./openapi-schemas";
import { alsoBodyType, parameterSchemas } from "../http/route-docs";
import { keyedRoute, type BunRoute, type KeyedWork } from "../http/bun-routes";

const security: Array<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }];

type LlmRouteHook = { parse: "none"; detail: DocumentDecoration };

/** What an LLM route's handler reads of Elysia's context (`auth` from protect). */
interface LlmRouteContext {
  request: Request;
  auth: AuthContext;
  set: { headers: Record<string, string | number> };
  server: IdleTimeouts | null;
}

/** One LLM endpoint: its protocol and path, and its entry in the API reference. */
interface LlmEndpoint {
  proto: LlmProtocol;
  path: string;
  summary: string;
  description: string;
  doc: object;
}

/** The LLM endpoints, in the order the API reference lists them. */
const LLM_ENDPOINTS: LlmEndpoint[] = [
  {
    proto: protocols.anthropic,
    path: "/v1/messages",
    summary: "Anthropic Messages",
    description:
      "Anthropic's Messages API for every LLM: passed through (streaming or not) for Claude, with `?beta=true` and the `anthropic-version` / `anthropic-beta` headers forwarded; translated for every other model. Metered from the provider's own usage; `max_credits` (credits) caps the hold.",
    doc: llmDoc("AnthropicMessagesRequest", "AnthropicMessage", "AnthropicStreamEvent"),
  },
  {
    proto: protocols.anthropic,
    path: "/v1/messages/count_tokens",
    summary: "Count tokens (free)",
    description:
      "Anthropic's token counter for Claude, passed through; for any other LLM the gateway's estimate (the hold's input estimate). Not metered.",
    doc: llmDoc("CountTokensRequest", "CountTokensResponse", undefined, false),
  },
  {
    proto: protocols.responses,
    path: "/v1/responses",
    summary: "OpenAI Responses",
    description:
      "OpenAI's Responses API for every LLM: passed through for GPT and Grok models, translated for the others. Metered from the provider's own usage.",
    doc: llmDoc("ResponsesRequest", "OpenAIResponse", "ResponsesStreamEvent"),
  },
  {
    proto: protocols.chat,
    path: "/v1/chat/completions",
    summary: "OpenAI Chat Completions",
    description:
      "Chat Completions for every LLM: passed through for GPT-5.2, Gemini and DeepSeek (streams get `stream_options.include_usage` upstream; the extra usage chunk is removed again when the client did not ask for it), translated for the others.",
    doc: llmDoc("ChatCompletionRequest", "ChatCompletion", "ChatCompletionStreamEvent"),
  },
  {
    proto: protocols.embeddings,
    path: "/v1/embeddings",
    summary: "Embeddings",
    description: "OpenAI-style embeddings (float or base64), metered at prompt_tokens × the input price.",
    doc: llmDoc("EmbeddingsRequest", "EmbeddingsResponse"),
  },
];

/**
 * One endpoint's call, once the caller is known: its answer carries `headers` (request ids, rate-limit state). A free
 * endpoint (count_tokens) charges nothing, so an Idempotency-Key would keep nothing of it (idempotent.ts): ignored.
 */
function llmCall(deps: LlmDeps, idem: Idempotency, endpoint: LlmEndpoint): KeyedWork {
  const { proto, path } = endpoint;
  const metered = !proto.unmeteredPaths.includes(path);
  return (request, auth, headers, server) =>
    metered && request.headers.has(IDEMPOTENCY_HEADER)
      ? idempotentLlm(deps.ctx, idem, request, auth, headers, (again, onEnd) =>
          handleLlm(deps, proto, path, again, auth, headers, server && connectionTimeouts(server, request), onEnd),
        )
      : handleLlm(deps, proto, path, request, auth, headers, server);
}

/**
 * One LLM endpoint as Elysia's `.post` arguments, for the API reference and for whatever Bun's router passes on to
 * Elysia (http/bun-routes.ts). `parse: "none"`: the handler reads the body itself, once; it goes upstream as it came.
 */
function llmRoute(
  call: KeyedWork,
  endpoint: LlmEndpoint,
): [string, (context: LlmRouteContext) => Promise<Response>, LlmRouteHook] {
  const { path, summary, description, doc } = endpoint;
  const handler = async ({ request, auth, set, server }: LlmRouteContext): Promise<Response> => {
    const answer = await call(request, auth, set.headers as Record<string, string>, server); // strings only so far
    // The answer already carries `set.headers`. Left there, Elysia would merge them into it again by rebuilding the
    // Response: a copy of every header and the body re-wrapped as a stream. An error thrown above still finds them.
    set.headers = {};
    return answer;
  };
  return [path, handler, { parse: "none", detail: { tags: ["LLM"], summary, description, security, ...doc } }];
}

// Once per process: streams still open when the shutdown grace period ends get their protocol's error event.
onGraceOver(() => cutStreams(), "LLM streams");

/** The LLM calls, behind the key guard, and the probes Claude Code sends first. */
function llmCallRoutes(ctx: AppContext, calls: Map<LlmEndpoint, KeyedWork>) {
  const routes = new Elysia({ name: "llm-calls" })
    // Claude Code probes the base URL with HEAD / (or /api/hello) before its first call. Not an API: not documented.
    .head("/", () => new Response(null, { status: 200 }), { detail: { hide: true } })
    .head("/api/hello", () => new Response(null, { status: 200 }), { detail: { hide: true } })
    .use(protect(ctx));
  for (const [endpoint, call] of calls) routes.post(...llmRoute(call, endpoint));
  return routes;
}

/** The caller's usage records, read once the calls just answered are committed (they may still be queued). */
function usageRoutes(ctx: AppContext) {
  const ledger = ctx.llmLedger;
  return new Elysia({ name: "llm-usage" })
    .use(protect(ctx))
    .get(
      "/v1/usage",
      async ({ auth, query, request }) => {
        await ledger.committedFor(auth.accountId);
        const list = await listUsage(ctx, auth.accountId, query);
        // The CSV is a Response, which Elysia sends as it is (the response schema describes the JSON).
        return request.headers.get("accept")?.includes("text/csv") ? (usageCsv(list) as unknown as typeof list) : list;
      },
      {
        query: UsageQuery,
        response: UsageList,
        detail: {
          tags: ["LLM"],
          summary: "Your usage records",
          description:
            "One record per LLM or embeddings call: tokens by kind, credits charged, upstream status, latency and time to first byte. Newest first. With `Accept: text/csv`, the same records as CSV.",
          security,
          ...alsoBodyType("text/csv"),
          ...parameterSchemas({ limit: { type: "integer", minimum: 1, maximum: 1000, default: 100 } }),
        },
      },
    )
    .get(
      "/v1/usage/summary",
      async ({ auth, query }) => {
        await ledger.committedFor(auth.accountId);
        return usageSummary(ctx, auth.accountId, query);
      },
      {
        query: UsageSummaryQuery,
        response: UsageSummary,
        detail: {
          tags: ["LLM"],
          summary: "Your spend grouped by model, key or day",
          description:
            "Credits and tokens of LLM calls and finished media tasks, grouped by `group_by` (model, key or UTC day) within `from`/`to`.",
          security,
          ...parameterSchemas({ group_by: { type: "string", enum: ["model", "key", "day"], default: "model" } }),
        },
      },
    );
}

/**
 * The LLM routes: Elysia's (the API reference, the usage records) and, for the calls, Bun's own (`bunRoutes`, given
 * to Bun's router ahead of Elysia's: http/bun-routes.ts says why).
 */
export function llmRoutes(ctx: AppContext) {
  const budgets = new KeyBudgets(ctx.db, (e) =>
    ctx.log.error("key budget settle failed; the hold stays counted until the period resets", {
      error: (e as Error)?.message ?? String(e),
    }),
  );
  ctx.keyBudgets = budgets;
  const deps: LlmDeps = {
    ctx,
    providers: buildProviders(ctx.config.raw),
    ledger: ctx.llmLedger,
    budgets,
    timeouts: llmTimeoutsOf(ctx.config.raw),
  };
  const idem = new Idempotency(ctx.db);
  const calls = new Map(LLM_ENDPOINTS.map((endpoint) => [endpoint, llmCall(deps, idem, endpoint)]));
  const bunRoutes: Record<string, { POST: BunRoute }> = {};
  for (const [endpoint, call] of calls) bunRoutes[endpoint.path] = { POST: keyedRoute(ctx, endpoint.path, call) };
  const routes = new Elysia({ name: "llm" }).use(llmCallRoutes(ctx, calls)).use(usageRoutes(ctx));
  return { routes, bunRoutes };
}
