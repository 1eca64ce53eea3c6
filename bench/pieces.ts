// What one piece of the gateway's work adds to a sequential call, to a microsecond or two: one Bun server whose
// routes are the bare proxy's handler, each adding one piece of the gateway's own code (the body read under its
// deadline, the upstream call's watchers, reading a stream's arrived chunks, the whole-stream step, the answer's
// headers); the client sends one request at a time and cycles through the routes, in alternating order, so every
// route sees the same moments of a busy machine. A whole gateway against another (two processes, restarted) moves
// ±10 µs from one start to the next; within one process, side by side, a piece's cost repeats within ~1–2 µs.
//   bun bench/pieces.ts [json|stream] [rounds, default 3000]
// Prints each route's median and its difference from the first. Starts its own fake upstream (--fast).

import { bodyBytes } from "../src/http/body-limits";
import { readArrived, readHead } from "../src/llm/answer-head";
import { joined } from "../src/llm/bytes";
import { wholeChatStream } from "../src/llm/protocols/sse-whole";
import { startFake } from "./targets";

type Route = (req: Request) => Promise<Response>;

const mode = process.argv[2] === "stream" ? "stream" : "json";
const rounds = Number(process.argv[3] ?? 3000);
const fake = await startFake(19190 + Math.floor(Math.random() * 800)); // beside a running bench, another port
const upstream = `${fake.url}/v1/chat/completions`;
const body = JSON.stringify({
  model: "gpt-5.2",
  max_completion_tokens: 256,
  ...(mode === "stream" && { stream: true, stream_options: { include_usage: true } }),
  messages: [{ role: "user", content: "Say hello." }],
});
const limits = { seconds: 30, maxBytes: 32 * 1024 ** 2 };
const typeOf = (res: Response) => res.headers.get("content-type") ?? "application/json";
const send = (req: Request, bytes: Uint8Array, signal = req.signal) =>
  fetch(upstream, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
    body: bytes,
    signal,
  });
const answer = (res: Response, bytes: Uint8Array | ReadableStream | null, headers = { "content-type": typeOf(res) }) =>
  new Response(bytes, { status: res.status, headers });
/** The seven headers a gateway's answer carries (request ids, rate-limit state, type, cache-control on a stream). */
const owed = (res: Response) => ({
  "x-request-id": "req_019ac0de",
  "request-id": "req_019ac0de",
  "x-ratelimit-limit": "1000000000",
  "x-ratelimit-remaining": "999999999",
  "x-ratelimit-reset": "1",
  "content-type": typeOf(res),
  "cache-control": "no-cache",
});
/** Every chunk already in, as native.ts reads an answer before it decides how to send it. */
async function arrived(res: Response): Promise<Uint8Array> {
  const head = mode === "stream" ? readArrived(res.body!) : readHead(res, 64 * 1024);
  return joined((head instanceof Promise ? await head : head).chunks);
}

/** The upstream call as the gateway makes it: its own controller, the client's signal followed, a first-byte timer. */
async function watched(req: Request, bytes: Uint8Array): Promise<Response> {
  const upstream = new AbortController();
  req.signal.addEventListener("abort", () => upstream.abort(req.signal.reason));
  const timer = setTimeout(() => upstream.abort(), 600_000);
  try {
    return await send(req, bytes, upstream.signal);
  } finally {
    clearTimeout(timer);
  }
}

// Each route adds its piece to the one before it, so each difference from the previous route is that piece's cost.
const routes: Record<string, Route> = {
  bare: async (req) => {
    const res = await send(req, await req.bytes());
    return answer(res, res.body);
  },
  "+headers read": async (req) => {
    req.headers.get("content-length");
    const res = await send(req, await req.bytes());
    return answer(res, res.body);
  },
  "+body deadline": async (req) => {
    const res = await send(req, await bodyBytes(req, limits));
    return answer(res, res.body);
  },
  "+call watchers": async (req) => {
    const res = await watched(req, await bodyBytes(req, limits));
    return answer(res, res.body);
  },
  "+answer read": async (req) => {
    const res = await watched(req, await bodyBytes(req, limits));
    return answer(res, await arrived(res));
  },
  "+whole stream": async (req) => {
    const res = await watched(req, await bodyBytes(req, limits));
    const bytes = await arrived(res);
    const whole = mode === "stream" ? wholeChatStream(bytes, true) : null;
    return answer(res, whole ? whole.bytes : bytes);
  },
  "+answer headers": async (req) => {
    const res = await watched(req, await bodyBytes(req, limits));
    const bytes = await arrived(res);
    const whole = mode === "stream" ? wholeChatStream(bytes, true) : null;
    return answer(res, whole ? whole.bytes : bytes, owed(res));
  },
};

const names = Object.keys(routes);
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (req) => routes[decodeURIComponent(new URL(req.url).pathname.slice(1))]!(req),
});
const call = async (name: string) => {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${server.port}/${encodeURIComponent(name)}`, { method: "POST", body });
  await res.bytes();
  return (performance.now() - started) * 1000;
};
// Warm every route's code under concurrent load first: a process that has served only sequential calls runs each
// step 1.5–2× slower (docs/architecture.md).
await Promise.all(
  Array.from({ length: 16 }, async () => {
    for (let i = 0; i < 100 * names.length; i++) await call(names[i % names.length]!);
  }),
);
const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < rounds; i++)
  for (const name of i % 2 ? names : names.toReversed()) times[name]!.push(await call(name));
const median = (a: number[]) => a.toSorted((x, y) => x - y)[a.length >> 1]!;
const first = median(times[names[0]!]!);
console.log(`${mode}, ${rounds} rounds, median µs (difference from "${names[0]}"):`);
for (const name of names) {
  const m = median(times[name]!);
  console.log(
    `  ${name.padEnd(16)} ${m.toFixed(1).padStart(7)}  ${(m - first >= 0 ? "+" : "") + (m - first).toFixed(1)}`,
  );
}
server.stop(true);
await fake.stop();
