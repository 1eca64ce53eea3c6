// A fake LLM upstream speaking the four protocols as the recorded fixtures do, byte for byte, with failures on
// demand. Used by tests (startFakeLlmUpstream) and by the benchmark (run standalone:
//   bun test/fakes/llm-upstream.ts --port 9100 --fast
// prints its URL). Base URLs, following each SDK's convention: Anthropic `url`, OpenAI `url + "/v1"`, DeepSeek
// `url`, Gemini root `url` (chat under /v1beta/openai).
//
// Scenarios: each LLM request takes the next queued scenario (enqueue), else the default (setScenario). HEAD and
// count_tokens never consume the queue. See llm-answers.ts for ScenarioSpec.

import { rng } from "./chunking";
import {
  contentFor,
  errorFor,
  toSpec,
  type Answer,
  type FakeProtocol,
  type Scenario,
  type ScenarioSpec,
} from "./llm-answers";
import { fixtureBytes } from "./fixtures";
import { afterEvents, done, json, send, type Wire } from "./llm-wire";

export type { Scenario, ScenarioSpec } from "./llm-answers";

export interface RecordedRequest {
  method: string;
  path: string;
  /** the query string including "?", or "" */
  query: string;
  headers: Record<string, string>;
  body: string;
  scenario: ScenarioSpec | null;
  startedAt: number;
  /** set when the last byte was handed to the connection */
  finishedAt?: number;
  /** the client went away before the end */
  aborted: boolean;
  abortedAt?: number;
}

export interface FakeLlmUpstreamOptions {
  port?: number;
  hostname?: string;
  /** no delays anywhere, one chunk per SSE event: for benchmarks */
  fast?: boolean;
  /** seed for the irregular chunking (default 1) */
  seed?: number;
  /** keep RecordedRequests (default true; the standalone benchmark server turns it off) */
  record?: boolean;
  defaultScenario?: Scenario;
}

export interface FakeLlmUpstream {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** upstream requests whose client went away before the end */
  readonly aborts: number;
  setScenario(s: Scenario): void;
  /** cuts the connections of drops held with `cutWhenTold` */
  cut(): void;
  enqueue(...s: Scenario[]): void;
  /** clears requests, aborts, the queue, held drops (cut), and the default scenario back to the constructor's */
  reset(): void;
  stop(): Promise<void>;
}

const ROUTES: Record<string, FakeProtocol | "count"> = {
  "/v1/messages": "anthropic",
  "/v1/messages/count_tokens": "count",
  "/v1/chat/completions": "chat",
  "/chat/completions": "chat", // DeepSeek: no /v1 in its base
  "/v1beta/openai/chat/completions": "chat", // Gemini's OpenAI-compatible path
  "/v1/responses": "responses",
  "/v1/embeddings": "embeddings",
};

/** What a fake holds between requests: its scenarios, what it recorded, its abort count. */
interface FakeState {
  initial: ScenarioSpec;
  fallback: ScenarioSpec;
  queue: ScenarioSpec[];
  requests: RecordedRequest[];
  aborts: number;
  record: boolean;
  /** the drops held until the test's `cut()` */
  held: (() => void)[];
  wire: Omit<Wire, "fast">;
}

export function startFakeLlmUpstream(opts: FakeLlmUpstreamOptions = {}): FakeLlmUpstream {
  const initial = toSpec(opts.defaultScenario ?? (opts.fast ? "fast" : "ok"));
  const held: (() => void)[] = [];
  const state: FakeState = {
    initial,
    fallback: initial,
    queue: [],
    requests: [],
    aborts: 0,
    record: opts.record !== false,
    held,
    wire: {
      told: () => new Promise((resolve) => held.push(resolve)),
      next: rng(opts.seed ?? 1),
      // Bun reports a client that went away through req.signal and by cancelling the body stream; either counts once.
      markAborted: (rec: RecordedRequest) => {
        if (rec.finishedAt !== undefined || rec.aborted) return;
        rec.aborted = true;
        rec.abortedAt = performance.now();
        state.aborts++;
      },
    },
  };
  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    idleTimeout: 60,
    fetch: (req) => answerRequest(req, state, opts),
  });

  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: state.requests,
    get aborts() {
      return state.aborts;
    },
    setScenario(s) {
      state.fallback = toSpec(s);
    },
    cut() {
      for (const go of state.held.splice(0)) go();
    },
    enqueue(...s) {
      state.queue.push(...s.map(toSpec));
    },
    reset() {
      state.requests.length = 0;
      state.queue.length = 0;
      state.aborts = 0;
      state.fallback = state.initial;
      for (const go of state.held.splice(0)) go(); // a held drop of an earlier test is cut now
    },
    async stop() {
      await server.stop(true);
    },
  };
}

/** Records the request, takes its scenario, and answers in the protocol of its path. */
async function answerRequest(req: Request, state: FakeState, opts: FakeLlmUpstreamOptions): Promise<Response> {
  const url = new URL(req.url);
  const route = ROUTES[url.pathname];
  const isLlm = req.method === "POST" && route !== undefined && route !== "count";
  const { record, wire } = state;
  const rec: RecordedRequest = {
    method: req.method,
    path: url.pathname,
    query: url.search,
    headers: record ? Object.fromEntries(req.headers) : {}, // the benchmark's fake keeps nothing: no copy
    body: await req.text(),
    scenario: isLlm ? (state.queue.shift() ?? state.fallback) : null,
    startedAt: performance.now(),
    aborted: false,
  };
  if (record) state.requests.push(rec);
  // Bun makes a request's AbortSignal on first use: the benchmark's fake (nothing recorded, no delays) needs none.
  if (record || !opts.fast) req.signal.addEventListener("abort", () => wire.markAborted(rec));

  if (req.method === "HEAD") return done(rec, new Response(null, { status: 200 }));
  if (route === undefined || req.method !== "POST") {
    return done(
      rec,
      json(404, '{"error":{"message":"Not found","type":"invalid_request_error","param":null,"code":null}}', {}),
    );
  }
  const protocol: FakeProtocol = route === "count" ? "anthropic" : route;
  const requestId = newRequestId(protocol);
  const idHeader = protocol === "anthropic" ? "request-id" : "x-request-id";
  let body: any;
  try {
    body = JSON.parse(rec.body);
  } catch {
    const a = errorFor(protocol, 400, { kind: "error" }, requestId, undefined);
    return done(rec, json(400, a.body, { [idHeader]: requestId }));
  }
  if (route === "count") return done(rec, json(200, fixtureBytes("A_count.json"), { [idHeader]: requestId }));

  const spec = rec.scenario!;
  const fast = opts.fast === true || spec.kind === "fast";
  let answer: Answer | null = spec.kind === "error" ? null : contentFor(protocol, body, spec);
  if (!answer) answer = errorFor(protocol, spec.status ?? 500, spec, requestId, body?.model);
  answer.headers[idHeader] = requestId;
  if (spec.endAfterEvents !== undefined)
    answer.body = answer.body.subarray(0, afterEvents(answer.body, spec.endAfterEvents));
  return send(rec, answer, spec, { ...wire, fast });
}

function newRequestId(protocol: FakeProtocol): string {
  const hex = crypto.randomUUID().replaceAll("-", "");
  return protocol === "anthropic" ? `req_011C${hex.slice(0, 20)}` : `req_${hex}`;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const arg = (name: string) => {
    const i = args.indexOf(name);
    return i === -1 ? undefined : args[i + 1];
  };
  const fake = startFakeLlmUpstream({
    port: Number(arg("--port") ?? 9100),
    hostname: arg("--host") ?? "127.0.0.1",
    fast: args.includes("--fast"),
    seed: Number(arg("--seed") ?? 1),
    record: false,
  });
  console.log(fake.url);
}
