// The LLM calls are served by Bun's router on a real server (http/bun-routes.ts) and by Elysia's lifecycle for
// whatever reaches Elysia (app.handle, another method). Both must answer alike: the same status, body and headers
// for a refusal at each step and for a call that goes through, and an access log line and a request metric for each.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startEnv, stopEnv, type Env } from "./support";
import { withAccessLog } from "../support/gateway";
import { scrape } from "../../src/ops/metrics";

let e: Env;
beforeAll(async () => {
  e = await startEnv({ env: { MAX_REQUEST_BODY_MB: "1" } });
});
afterAll(() => stopEnv(e));

const chat = JSON.stringify({
  model: "gpt-5.2",
  max_completion_tokens: 50,
  messages: [{ role: "user", content: "Hi" }],
});

/** What a caller can tell of an answer, the request id aside (each request has its own). */
async function seen(r: Response) {
  const id = r.headers.get("x-request-id") ?? "";
  expect(id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(r.headers.get("request-id")).toBe(id);
  const names = [...r.headers.keys()].filter((n) => n !== "date" && n !== "content-length").sort();
  const masked = (n: string) =>
    n.startsWith("x-ratelimit-") || n === "retry-after" ? "n" : r.headers.get(n)!.replaceAll(id, "<id>");
  const headers = Object.fromEntries(names.map((n) => [n, masked(n)]));
  const text = (await r.text())
    .replaceAll(id, "<id>")
    .replace(/"(id|created)":\s*("[^"]*"|\d+)/g, '"$1":0')
    .replace(/retry in \d+ s/, "retry in n s");
  return { status: r.status, headers, body: text };
}

type Send = (path: string, init: RequestInit) => Promise<Response>;
const viaBun: Send = (path, init) => fetch(e.gw.url + path, init);
const viaElysia: Send = (path, init) => e.gw.app.handle(new Request("http://localhost" + path, init));

async function cases(send: Send) {
  const { key } = await e.gw.account(100);
  const limited = await e.gw.account(100, { rateRequests: 1, rateWindowSeconds: 60 });
  const post = (path: string, body: string, headers: Record<string, string> = { authorization: `Bearer ${key}` }) =>
    send(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const out: Record<string, Awaited<ReturnType<typeof seen>>> = {};
  out.noKey = await seen(await post("/v1/chat/completions", chat, {}));
  out.anthropicNoKey = await seen(await post("/v1/messages", chat, {}));
  out.ok = await seen(await post("/v1/chat/completions", chat));
  out.unknownModel = await seen(await post("/v1/chat/completions", chat.replace("gpt-5.2", "no-such-model")));
  out.badJson = await seen(await post("/v1/chat/completions", "{"));
  out.tooLarge = await seen(await post("/v1/chat/completions", "x".repeat(1024 ** 2 + 1)));
  out.nul = await seen(await post("/v1/chat/completions?x=%00", chat));
  await post("/v1/chat/completions", chat, { authorization: `Bearer ${limited.key}` });
  out.rateLimited = await seen(await post("/v1/chat/completions", chat, { authorization: `Bearer ${limited.key}` }));
  return out;
}

/** The 413s counted on chat completions so far: the registry is the process's, shared with every test file before. */
async function tooLargeCounted(): Promise<number> {
  const line = /switchyard_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="413"\} (\d+)/;
  return Number(line.exec(await scrape(e.gw.ctx.db))?.[1] ?? 0);
}

test("Bun's router and Elysia answer every LLM call alike: refusals, a call that goes through, log lines, metrics", async () => {
  const before = await tooLargeCounted();
  await withAccessLog(e.gw, async (logged) => {
    const bun = await cases(viaBun);
    const lines = logged.length;
    const elysia = await cases(viaElysia);
    expect(bun).toEqual(elysia);
    expect(Object.values(bun).map((a) => a.status)).toEqual([401, 401, 200, 404, 400, 413, 400, 429]);
    expect(bun.anthropicNoKey.body).toContain('"type":"error"'); // Anthropic's shape, not OpenAI's
    expect(bun.rateLimited.headers["retry-after"]).toBe("n"); // present, in whole seconds
    // Elysia logs after the answer has gone (onAfterResponse), Bun's router before it goes: wait for both.
    await Bun.sleep(20);
    expect(lines).toBe(9); // every request, the limited key's first call too
    expect(logged.length).toBe(18);
    // Elysia refuses a NUL in the URL before routing ("unmatched"); Bun's router has matched the route by then.
    const statuses = (from: number, to: number) => logged.slice(from, to).map((l) => [l.method, l.status]);
    expect(statuses(0, 9)).toEqual(statuses(9, 18));
    expect(logged.slice(0, 9).map((l) => l.route)).toEqual([
      "/v1/chat/completions",
      "/v1/messages",
      ...Array(7).fill("/v1/chat/completions"),
    ]);
  });
  expect((await tooLargeCounted()) - before).toBe(2);
});

test("another method on an LLM path is refused with 405 and the methods it answers", async () => {
  const r = await fetch(e.gw.url + "/v1/chat/completions");
  expect(r.status).toBe(405);
  expect(r.headers.get("allow")).toBe("POST");
  expect(r.headers.get("x-request-id")).toMatch(/^req_/);
});
