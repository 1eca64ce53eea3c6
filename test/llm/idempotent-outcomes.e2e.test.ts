// What an Idempotency-Key keeps of an LLM call follows the call's end as the ledger books it (llm/idempotent.ts):
// a stream keeps its key running until it ends, then keeps it only if it was charged; an upstream error answer
// that charged nothing frees the key, so the SDK's retry under the same key runs. SQLite and Postgres.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { useGatewayOn, type TestGateway } from "../support/gateway";
import { dialects } from "../support/services";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { eventCount, ledgerOf, MICROS, providerEnv } from "./support";

const CHAT = "/v1/chat/completions";
const chat = { model: "gpt-5.2", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };
const streamed = { ...chat, stream: true };

const errorCode = async (r: Response) => [r.status, ((await r.json()) as any).error.code];

/** Reads `res`'s stream until it holds `events` whole events; returns the text and the reader for the rest. */
async function readEvents(res: Response, events: number) {
  const reader = res.body!.getReader();
  const utf8 = new TextDecoder();
  let text = "";
  while (eventCount(text) < events) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`stream ended after ${eventCount(text)} events`);
    text += utf8.decode(value, { stream: true });
  }
  const rest = async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += utf8.decode(value, { stream: true });
    }
  };
  return { text, rest };
}

/** Calls to `gw` with an Idempotency-Key, and what its database says of them. */
function callsOn(gw: () => TestGateway) {
  const post = (key: string, body: unknown, idem: string, init: RequestInit = {}, path = CHAT) =>
    fetch(gw().url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idem },
      body: JSON.stringify(body),
      ...init,
    });
  const keyState = async (accountId: string, key: string) =>
    (
      await gw().ctx.db.get<{ state: string }>(
        sql`select state from idempotency_keys where account_id = ${accountId} and key = ${key}`,
      )
    )?.state ?? "free";
  /** Until the key is in `state` (the call's end is booked just after the client has the last of its answer). */
  async function until(accountId: string, key: string, state: "free" | "done") {
    for (let i = 0; i < 300; i++) {
      if ((await keyState(accountId, key)) === state) return;
      await Bun.sleep(10);
    }
    throw new Error(`key never ${state}: ${await keyState(accountId, key)}`);
  }
  /** The ledger of an account that started with 100 credits: every call but the `charged` one cost nothing. */
  async function chargedOnce(accountId: string, calls: number, charged: number) {
    const ledger = await ledgerOf(gw(), accountId);
    expect(ledger.calls.length).toBe(calls);
    const costs = ledger.calls.map((c) => c.cost);
    const cost = costs[charged]!;
    expect(cost).toBeGreaterThan(0);
    expect(costs.filter((c, i) => i !== charged && c !== 0)).toEqual([]);
    expect(ledger.charges.map((c) => c.amount)).toEqual([-cost]);
    expect([Number(ledger.wallet.balance), Number(ledger.wallet.held)]).toEqual([100 * MICROS - cost, 0]);
  }
  return { post, keyState, until, chargedOnce };
}

for (const d of dialects.filter((x) => x.available)) {
  describe(`an Idempotency-Key follows the LLM call's end (${d.name})`, () => {
    const fake = startFakeLlmUpstream();
    const env = useGatewayOn(d.name, providerEnv(fake.url));
    afterAll(() => fake.stop());

    const { post, keyState, until, chargedOnce } = callsOn(() => env.gw);

    test("a stream cut mid-way: in progress while open, then nothing charged and the key freed; the retry runs and is charged once", async () => {
      const { accountId, key } = await env.gw.account(100);
      fake.enqueue({ kind: "drop", dropAfterEvents: 2, cutWhenTold: true });
      const first = await post(key, streamed, "cut-1");
      expect(first.status).toBe(200);
      const { rest } = await readEvents(first, 2);
      // The upstream holds the stream open: a duplicate is told the first still runs.
      expect(await errorCode(await post(key, streamed, "cut-1"))).toEqual([409, "idempotency_in_progress"]);
      fake.cut();
      expect(await rest()).toContain("nothing was charged");
      await until(accountId, "cut-1", "free");
      const retry = await post(key, streamed, "cut-1");
      expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
      expect(await retry.text()).toContain("data: [DONE]");
      await until(accountId, "cut-1", "done");
      await chargedOnce(accountId, 2, 1);
    });

    test("a stream that completes: its repeat is 409 idempotency_replay_unavailable and nothing more is charged", async () => {
      const { accountId, key } = await env.gw.account(100);
      const first = await post(key, streamed, "whole-1");
      expect(await first.text()).toContain("data: [DONE]");
      await until(accountId, "whole-1", "done");
      const before = fake.requests.length;
      expect(await errorCode(await post(key, streamed, "whole-1"))).toEqual([409, "idempotency_replay_unavailable"]);
      expect(fake.requests.length).toBe(before);
      await chargedOnce(accountId, 1, 0);
    });

    test("a client that leaves mid-stream frees its key: its retry runs", async () => {
      const { accountId, key } = await env.gw.account(100);
      fake.enqueue({ kind: "drop", dropAfterEvents: 2, cutWhenTold: true });
      const leave = new AbortController();
      const first = await post(key, streamed, "left-1", { signal: leave.signal });
      await readEvents(first, 2);
      leave.abort();
      await until(accountId, "left-1", "free");
      fake.cut(); // the held upstream connection, already let go by the gateway
      const retry = await post(key, streamed, "left-1");
      expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
      expect(await retry.text()).toContain("data: [DONE]");
    });

    for (const status of [429, 500, 529, 400])
      test(`an upstream ${status} charges nothing and keeps nothing: the retry under the same key runs, and its answer is replayed`, async () => {
        const { accountId, key } = await env.gw.account(100);
        const idem = `status-${status}`;
        fake.enqueue({ kind: "error", status, retryAfter: "0" });
        const first = await post(key, chat, idem);
        expect(first.status).toBe(status);
        await first.text();
        expect(await keyState(accountId, idem)).toBe("free"); // freed before the client had the answer
        const retry = await post(key, chat, idem);
        expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
        const body = await retry.text();
        await until(accountId, idem, "done");
        const before = fake.requests.length;
        const replay = await post(key, chat, idem);
        expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
        expect(await replay.text()).toBe(body);
        expect(fake.requests.length).toBe(before);
        await chargedOnce(accountId, 2, 1);
      });

    test("an error answered after the call was charged is kept: its repeat is replayed, not charged again", async () => {
      const { accountId, key } = await env.gw.account(100);
      // A chat answer with usage that cannot be translated for /v1/messages: its usage is charged, the client gets 502.
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      fake.enqueue({ kind: "error", status: 200, body: JSON.stringify({ error: { message: "odd" }, usage }) });
      const ask = { model: "gpt-5.2", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };
      const first = await post(key, ask, "charged-502", {}, "/v1/messages");
      expect(first.status).toBe(502);
      const body = await first.text();
      await until(accountId, "charged-502", "done");
      const before = fake.requests.length;
      const again = await post(key, ask, "charged-502", {}, "/v1/messages");
      expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([502, "true"]);
      expect(await again.text()).toBe(body);
      expect(fake.requests.length).toBe(before);
      await chargedOnce(accountId, 1, 0);
    });

    test("count_tokens is free: a key is not kept for it, each call runs", async () => {
      const { key } = await env.gw.account(100);
      const ask = { model: "claude-opus-4-5", messages: [{ role: "user", content: "hi" }] };
      const before = fake.requests.length;
      for (let i = 0; i < 2; i++) {
        const r = await post(key, ask, "count-1", {}, "/v1/messages/count_tokens");
        expect([r.status, r.headers.get("idempotent-replayed")]).toEqual([200, null]);
        await r.text();
      }
      expect(fake.requests.length).toBe(before + 2);
    });

    test("a request taken for lost that ends after all leaves the key to the one that took it over", async () => {
      const { accountId } = await env.gw.account(100);
      const { Idempotency, STALE_RUNNING_MS } = await import("../../src/http/idempotency");
      const now = Date.now();
      const lost = await new Idempotency(env.gw.ctx.db, () => now - STALE_RUNNING_MS - 1).begin(accountId, "k", "x");
      const taker = await new Idempotency(env.gw.ctx.db, () => now).begin(accountId, "k", "x");
      if (!lost.run || !taker.run) throw new Error("both should have run");
      await lost.remember({ status: 200, contentType: "text/plain", body: "lost" });
      expect(await keyState(accountId, "k")).toBe("running");
      await lost.abandon();
      expect(await keyState(accountId, "k")).toBe("running");
      await taker.remember({ status: 200, contentType: "text/plain", body: "taker" });
      const again = await new Idempotency(env.gw.ctx.db).begin(accountId, "k", "x");
      expect(again.run ? null : await again.replay.text()).toBe("taker");
    });

    describe("with upstream timeouts of 0.3 s", () => {
      const timed = useGatewayOn(d.name, {
        ...providerEnv(fake.url),
        LLM_FIRST_BYTE_TIMEOUT_SECONDS: "0.3",
        LLM_SILENCE_TIMEOUT_SECONDS: "0.3",
      });
      const t = callsOn(() => timed.gw);

      test("a stream the upstream left silent charges nothing: the key is freed and the retry runs", async () => {
        const { accountId, key } = await timed.gw.account(100);
        fake.enqueue({ kind: "ok", stallAfterEvents: 2 });
        const first = await t.post(key, streamed, "silent-1");
        expect(await first.text()).toContain("upstream_timeout");
        await t.until(accountId, "silent-1", "free");
        const retry = await t.post(key, streamed, "silent-1");
        expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
        expect(await retry.text()).toContain("data: [DONE]");
        await t.chargedOnce(accountId, 2, 1);
      });

      test("no headers in time (504 upstream_timeout): the key is freed and the retry runs", async () => {
        const { accountId, key } = await timed.gw.account(100);
        fake.enqueue({ kind: "ok", headersDelayMs: 5_000 });
        expect(await errorCode(await t.post(key, chat, "late-1"))).toEqual([504, "upstream_timeout"]);
        expect(await t.keyState(accountId, "late-1")).toBe("free");
        const retry = await t.post(key, chat, "late-1");
        expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
        await retry.text();
        await t.chargedOnce(accountId, 2, 1);
      });
    });
  });
}
