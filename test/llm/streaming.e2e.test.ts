// Streaming behaviour and failures: first byte before the upstream finished, client abort stopping the upstream
// within 100 ms and settling input + output so far, upstream failures releasing the hold.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { tempSqlitePath } from "../support/services";
import { contentFor } from "../fakes/llm-answers";
import { fixtureBytes } from "../fakes/fixtures";
import {
  expectCharged,
  expectVoided,
  leaveAfter,
  ledgerOf,
  MICROS,
  PRICES,
  startEnv,
  stopEnv,
  type Env,
} from "./support";
import { jsonOf, type AnswerOf } from "../support/json";
import type { UsageList } from "../../src/llm/usage-api";

type UsageRecord = AnswerOf<typeof UsageList>["data"][number];

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const P = PRICES["claude-opus-4-5"];
const anthropicStream = {
  model: "claude-opus-4-5",
  max_tokens: 1000,
  stream: true,
  messages: [{ role: "user", content: "Hi" }],
};
const post = (key: string, path: string, body: object, signal?: AbortSignal) =>
  fetch(e.gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });

test("the client receives the first byte before the upstream has finished", async () => {
  const { key } = await e.gw.account(100);
  e.fake.enqueue("slow");
  const r = await post(key, "/v1/messages", anthropicStream);
  const reader = r.body!.getReader();
  const first = await reader.read();
  expect(first.value!.length).toBeGreaterThan(0);
  const up = e.fake.requests.at(-1)!;
  expect(up.finishedAt).toBeUndefined(); // the upstream is still sending
  while (!(await reader.read()).done);
  expect(up.finishedAt).toBeDefined();
});

describe("a stream already complete when the gateway first reads it is answered in one piece", () => {
  // The fake sends the whole stream in one write with its headers (as a fast upstream's short stream reaches a
  // busy gateway): the client gets the same bytes with a content-length, metered exactly.
  test("anthropic: the upstream's bytes as they are", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", whole: true });
    const r = await post(key, "/v1/messages", anthropicStream);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/event-stream");
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect(r.headers.get("content-length")).toBe(String(bytes.length));
    expect(bytes).toEqual(fixtureBytes("A_stream_text.sse"));
    await expectCharged(e.gw, accountId, 100, 21 * P.input + 1450 * P.cacheWrite + 12 * P.output);
  });

  test("chat without include_usage: the usage chunk the gateway asked for is cut out, the charge exact", async () => {
    const { accountId, key } = await e.gw.account(100);
    const ask = {
      model: "gpt-5.2",
      max_completion_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "Hi" }],
    };
    e.fake.enqueue({ kind: "ok", whole: true });
    const r = await post(key, "/v1/chat/completions", ask);
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect(r.headers.get("content-length")).toBe(String(bytes.length));
    // What the upstream sent the gateway (with include_usage), less its usage-only chunk, every other byte as sent.
    const sent = new TextDecoder().decode(
      contentFor("chat", { ...ask, stream_options: { include_usage: true } }, { kind: "ok" })!.body,
    );
    const events = sent.split(/(?<=\n\n)/);
    const expected = events.filter((ev) => !ev.includes('"choices":[],"usage":{'));
    expect(expected.length).toBe(events.length - 1);
    expect(new TextDecoder().decode(bytes)).toBe(expected.join(""));
    expect(JSON.parse(e.fake.requests.at(-1)!.body).stream_options).toEqual({ include_usage: true });
    const G = PRICES["gpt-5.2"];
    await expectCharged(e.gw, accountId, 100, 19 * G.input + 7 * G.output);
  });

  test("a complete stream that states a failure releases the hold", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "stream-error", whole: true });
    const r = await post(key, "/v1/messages", anthropicStream);
    expect(new Uint8Array(await r.arrayBuffer())).toEqual(fixtureBytes("A_stream_error.sse"));
    await expectVoided(e.gw, accountId, 100);
  });
});

test("client abort mid-stream: upstream aborted within 100 ms; charged input + output so far, within the hold", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue("slow");
  const ac = new AbortController();
  const r = await post(key, "/v1/messages", anthropicStream, ac.signal);
  const reader = r.body!.getReader();
  let received = "";
  const dec = new TextDecoder();
  // Read until some text has arrived, then leave.
  while (!received.includes("text_delta")) received += dec.decode((await reader.read()).value!, { stream: true });
  const abortsBefore = e.fake.aborts;
  const leftAt = performance.now();
  ac.abort();
  const up = e.fake.requests.at(-1)!;
  while (up.abortedAt === undefined && performance.now() - leftAt < 1000) await Bun.sleep(2);
  expect(e.fake.aborts).toBe(abortsBefore + 1);
  expect(up.abortedAt! - leftAt).toBeLessThan(100);

  // Expected from the ledger's point of view: message_start's input counts (fixture: 21 input, 1450 cache
  // write) plus ceil(characters of text received / 4) output tokens (the documented estimate; message_start's
  // placeholder of 1 when that is larger). The upstream is slow (50 ms between chunks), so what we received is
  // what the gateway saw.
  const complete = received.slice(0, received.lastIndexOf("\n\n") + 2); // a tap only sees whole events
  const chars = [...complete.matchAll(/"text_delta","text":"((?:[^"\\]|\\.)*)"/g)].reduce(
    (n, m) => n + JSON.parse(`"${m[1]}"`).length,
    0,
  );
  const expected = 21 * P.input + 1450 * P.cacheWrite + Math.max(1, Math.ceil(chars / 4)) * P.output;
  const { calls, wallet } = await ledgerOf(e.gw, accountId);
  expect(calls[0]!.status).toBe("client_abort");
  expect(calls[0]!.cost).toBe(expected);
  expect(calls[0]!.cost).toBeLessThanOrEqual(calls[0]!.held);
  expect(Number(wallet.balance)).toBe(100 * MICROS - expected);
});

test("client abort before the upstream answered (slow headers): upstream aborted, never above the hold", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "ok", headersDelayMs: 400 });
  const chat = {
    model: "gpt-5.2",
    max_completion_tokens: 100,
    stream: true,
    messages: [{ role: "user", content: "Hi" }],
  };
  expect(await leaveAfter(e.fake, 100, (signal) => post(key, "/v1/chat/completions", chat, signal))).toBeLessThan(100);
  const { calls } = await ledgerOf(e.gw, accountId);
  expect(calls[0]!.status).toBe("client_abort");
  expect(calls[0]!.cost).toBeGreaterThan(0); // the input estimate: the upstream may have read the prompt
  expect(calls[0]!.cost).toBeLessThanOrEqual(calls[0]!.held);
});

describe("upstream failures release the hold", () => {
  const cases: Array<[string, string, object, object]> = [
    ["anthropic error event", "/v1/messages", anthropicStream, { kind: "stream-error" }],
    [
      "chat mid-stream error",
      "/v1/chat/completions",
      { model: "gpt-5.2", max_completion_tokens: 100, stream: true, messages: [] },
      { kind: "stream-error" },
    ],
    [
      "responses error event",
      "/v1/responses",
      { model: "gpt-4.1", max_output_tokens: 100, stream: true, input: "x" },
      { kind: "stream-error" },
    ],
    [
      "responses response.failed",
      "/v1/responses",
      { model: "gpt-4.1", max_output_tokens: 100, stream: true, input: "x" },
      { kind: "stream-failed" },
    ],
    ["anthropic dropped connection", "/v1/messages", anthropicStream, { kind: "drop" }],
    [
      "chat dropped connection",
      "/v1/chat/completions",
      { model: "gpt-5.2", max_completion_tokens: 100, stream: true, messages: [] },
      { kind: "drop" },
    ],
    [
      "responses HTTP 503",
      "/v1/responses",
      { model: "gpt-4.1", max_output_tokens: 100, input: "x" },
      { kind: "error", status: 503 },
    ],
    [
      "embeddings HTTP 400",
      "/v1/embeddings",
      { model: "text-embedding-3-small", input: "x" },
      { kind: "error", status: 400 },
    ],
  ];
  for (const [name, path, body, scenario] of cases) {
    test(name, async () => {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue(scenario as any);
      const r = await post(key, path, body);
      await r.text().catch(() => "dropped");
      await expectVoided(e.gw, accountId, 100);
    });
  }
});

test("usage records: one per call with tokens, cost, statuses and timings; filters; only the caller's own", async () => {
  const { key } = await e.gw.account(100);
  const other = await e.gw.account(100);
  const ok = await post(key, "/v1/messages", { ...anthropicStream, stream: false });
  await ok.text();
  e.fake.enqueue({ kind: "error", status: 500 });
  await (await post(key, "/v1/embeddings", { model: "text-embedding-3-small", input: "x" })).text();
  await (await post(other.key, "/v1/embeddings", { model: "text-embedding-3-small", input: "x" })).text();
  const get = async (q = "") =>
    jsonOf<AnswerOf<typeof UsageList>>(
      await fetch(e.gw.url + "/v1/usage" + q, { headers: { authorization: `Bearer ${key}` } }),
    );
  const all = await get();
  expect(all.data.length).toBe(2);
  const [emb, msg] = all.data as [UsageRecord, UsageRecord]; // both asserted just above: two records
  expect(msg).toMatchObject({
    request_id: ok.headers.get("x-request-id"),
    model: "claude-opus-4-5",
    endpoint: "/v1/messages",
    provider: "anthropic",
    status: "ok",
    upstream_status: 200,
  });
  expect(msg.usage).toEqual({
    input_tokens: 38,
    output_tokens: 74,
    cache_read_tokens: 2113,
    cache_write_tokens: 0,
    cache_write_1h_tokens: 0,
    web_search_calls: 0,
  });
  expect(msg.cost.micro_credits).toBe(38 * P.input + 2113 * P.cacheRead + 74 * P.output);
  expect(msg.latency_ms).toBeNumber();
  expect(msg.ttfb_ms).toBeNumber();
  expect(emb).toMatchObject({ status: "upstream_error", upstream_status: 500, cost: { micro_credits: 0 } });
  expect((await get(`?request_id=${msg.request_id}`)).data.length).toBe(1);
  expect((await get("?model=text-embedding-3-small")).data.length).toBe(1);
  expect((await get("?limit=1")).data.length).toBe(1);
  expect((await get(`?from=${Date.now() + 60_000}`)).data.length).toBe(0);
  expect((await get(`?to=${new Date(Date.now() + 60_000).toISOString()}`)).data.length).toBe(2);
});

test("usage records: a bad filter is a 422 in the OpenAI shape naming it, for the schema's checks and the times alike", async () => {
  const { key } = await e.gw.account(100);
  for (const [q, param] of [
    ["?limit=0", "limit"],
    ["?limit=1001", "limit"],
    ["?limit=2.5", "limit"],
    ["?limit=x", "limit"],
    ["?from=yesterday", "from"],
    ["?to=2026-13-45", "to"],
  ] as const) {
    const r = await fetch(e.gw.url + "/v1/usage" + q, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(422);
    expect(await r.json()).toMatchObject({ error: { code: "invalid_request", type: "invalid_request_error", param } });
  }
});

// The float (ledger/float.ts) shows as held while calls run; on shutdown it goes back to the wallet, so a restart
// does not leave credits held until the sweeper's expiry.
test("the float goes back to the wallet when the gateway shuts down", async () => {
  const path = tempSqlitePath();
  const own = await startEnv({ env: { DATABASE_URL: path, LEDGER_FLOAT_IDLE_MS: "600000" } });
  const { accountId, key } = await own.gw.account(100);
  const r = await fetch(own.gw.url + "/v1/messages", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...anthropicStream, stream: false }),
  });
  expect(r.status).toBe(200);
  await r.text();
  expect((await own.gw.ctx.ledger.balance(accountId))!.held).toBeGreaterThan(0); // idle release is ten minutes away
  await stopEnv(own);
  const db = await openDatabase(path);
  try {
    const w = (await db.get<any>(sql`select balance, held from wallets where account_id = ${accountId}`))!;
    expect(Number(w.held)).toBe(0);
    expect(Number(w.balance)).toBe(100 * MICROS - (38 * P.input + 2113 * P.cacheRead + 74 * P.output));
    expect(await new Ledger(db).check()).toEqual([]);
  } finally {
    await db.close();
  }
});
