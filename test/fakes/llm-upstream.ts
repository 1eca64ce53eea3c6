// A fake LLM upstream speaking the four protocols as the recorded fixtures do, byte for byte, with failures on
// demand. Used by tests (startFakeLlmUpstream) and by the benchmark (run standalone:
//   bun test/fakes/llm-upstream.ts --port 9100 --fast
// prints its URL). Base URLs, following each SDK's convention: Anthropic `url`, OpenAI `url + "/v1"`, DeepSeek
// `url`, Gemini root `url` (chat under /v1beta/openai).
//
// Scenarios: each LLM request takes the next queued scenario (enqueue), else the default (setScenario). HEAD and
// count_tokens never consume the queue. See llm-answers.ts for ScenarioSpec.

import { eventPieces, randomPieces, rng } from "./chunking";
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
  enqueue(...s: Scenario[]): void;
  /** clears requests, aborts, the queue, and the default scenario back to the constructor's */
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

export function startFakeLlmUpstream(opts: FakeLlmUpstreamOptions = {}): FakeLlmUpstream {
  const initial = toSpec(opts.defaultScenario ?? (opts.fast ? "fast" : "ok"));
  let fallback = initial;
  const queue: ScenarioSpec[] = [];
  const requests: RecordedRequest[] = [];
  let aborts = 0;
  const next = rng(opts.seed ?? 1);
  const record = opts.record !== false;
  // Bun reports a client that went away through req.signal and by cancelling the body stream; either counts once.
  const markAborted = (rec: RecordedRequest) => {
    if (rec.finishedAt !== undefined || rec.aborted) return;
    rec.aborted = true;
    rec.abortedAt = performance.now();
    aborts++;
  };

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url);
      const route = ROUTES[url.pathname];
      const isLlm = req.method === "POST" && route !== undefined && route !== "count";
      const rec: RecordedRequest = {
        method: req.method,
        path: url.pathname,
        query: url.search,
        headers: record ? Object.fromEntries(req.headers) : {}, // the benchmark's fake keeps nothing: no copy
        body: await req.text(),
        scenario: isLlm ? (queue.shift() ?? fallback) : null,
        startedAt: performance.now(),
        aborted: false,
      };
      if (record) requests.push(rec);
      // Bun makes a request's AbortSignal on first use: the benchmark's fake (nothing recorded, no delays) needs none.
      if (record || !opts.fast) req.signal.addEventListener("abort", () => markAborted(rec));

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

      if (spec.headersDelayMs && !fast) await sleepUnlessAborted(rec, spec.headersDelayMs);
      if (rec.aborted) return new Response(null, { status: 499 });
      const whole = spec.whole === true && spec.kind !== "drop";
      const stalls = spec.stallAfterBytes !== undefined || spec.stallAfterEvents !== undefined;
      const streamed =
        stalls ||
        (!whole && (answer.contentType === "text/event-stream" || spec.kind === "drop" || spec.chunked === true));
      if (stalls && spec.contentLength) answer.headers["content-length"] = String(answer.body.length);
      if (!streamed) {
        if (spec.firstByteMs && !fast) await Bun.sleep(spec.firstByteMs);
        if (spec.gzip)
          return done(
            rec,
            json(answer.status, Bun.gzipSync(new Uint8Array(answer.body)), {
              ...answer.headers,
              "content-encoding": "gzip",
            }),
          );
        if (whole)
          return done(
            rec,
            new Response(answer.body, {
              status: answer.status,
              headers: { "content-type": answer.contentType, "cache-control": "no-cache", ...answer.headers },
            }),
          );
        return done(rec, json(answer.status, answer.body, { "content-type": answer.contentType, ...answer.headers }));
      }
      return new Response(writeStream(rec, answer.body, spec, fast, next, markAborted), {
        status: answer.status,
        headers: { "content-type": answer.contentType, "cache-control": "no-cache", ...answer.headers },
      });
    },
  });

  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    get aborts() {
      return aborts;
    },
    setScenario(s) {
      fallback = toSpec(s);
    },
    enqueue(...s) {
      queue.push(...s.map(toSpec));
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
      aborts = 0;
      fallback = initial;
    },
    async stop() {
      await server.stop(true);
    },
  };
}

function done(rec: RecordedRequest, res: Response): Response {
  rec.finishedAt = performance.now();
  return res;
}

function json(status: number, body: Uint8Array | string, headers: Record<string, string>): Response {
  return new Response(body, { status, headers: { "content-type": "application/json", ...headers } });
}

/**
 * The body as a stream: irregular pieces at arbitrary offsets with small random gaps (or fixed delays when
 * slow; one piece per event and no waiting when fast). `drop` cuts the connection after some bytes:
 * controller.error(undefined) makes Bun reset the socket without a terminating chunk (and without logging).
 */
function writeStream(
  rec: RecordedRequest,
  bytes: Uint8Array,
  spec: ScenarioSpec,
  fast: boolean,
  next: () => number,
  markAborted: (rec: RecordedRequest) => void,
) {
  const cutAt =
    spec.kind === "drop"
      ? Math.min(
          spec.dropAfterEvents !== undefined
            ? afterEvents(bytes, spec.dropAfterEvents)
            : (spec.dropAfterBytes ?? Math.floor(bytes.length / 2)),
          bytes.length,
        )
      : -1;
  const stallAt =
    spec.stallAfterEvents !== undefined ? afterEvents(bytes, spec.stallAfterEvents) : (spec.stallAfterBytes ?? -1);
  const body = cutAt >= 0 ? bytes.subarray(0, cutAt) : stallAt >= 0 ? bytes.subarray(0, stallAt) : bytes;
  const pieces = fast || spec.eventPieces ? eventPieces(body) : randomPieces(body, next, spec.pieceBytes ?? 160);
  return new ReadableStream<Uint8Array>({
    async start(c) {
      try {
        if (!fast && spec.firstByteMs) await Bun.sleep(spec.firstByteMs);
        for (const p of pieces) {
          if (rec.aborted) return;
          c.enqueue(p);
          if (fast) continue;
          const gap = spec.chunkDelayMs ?? (next() < 0.5 ? 0 : 1 + Math.floor(next() * 3));
          if (gap > 0) await Bun.sleep(gap);
        }
        if (rec.aborted) return;
        if (stallAt >= 0) return void (await sleepUnlessAborted(rec, 30_000)); // then left open: hung
        if (cutAt >= 0) {
          // Let the bytes already written reach the client before the cut, as they would on a real network.
          await Bun.sleep(20);
          rec.finishedAt = performance.now(); // from here on a closing client is not an abort
          c.error(undefined);
          return;
        }
        rec.finishedAt = performance.now();
        c.close();
      } catch {
        // the client went away while we were writing: nothing more to do
      }
    },
    cancel() {
      markAborted(rec);
    },
  });
}

/** Waits `ms`, or less if the client goes away meanwhile (a hung upstream must not outlive its test). */
async function sleepUnlessAborted(rec: RecordedRequest, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (!rec.aborted && performance.now() < until) await Bun.sleep(Math.min(10, ms));
}

/** The offset just after the `n`th event's closing blank line (the recorded streams use LF). */
function afterEvents(bytes: Uint8Array, n: number): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  for (let seen = 0; seen < n; seen++) {
    const blank = text.indexOf("\n\n", at);
    if (blank === -1) return bytes.length;
    at = blank + 2;
  }
  return at;
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
