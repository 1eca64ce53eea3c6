// The LLM path's money under load, on SQLite and on Postgres: many streaming completions at once from one wallet
// that covers only some of their holds. Every request either streams and is charged exactly the fixture's usage,
// or is refused with 402 before anything goes upstream; nothing is overspent and the books balance afterwards.
// Holds come from a per-wallet float and what must reach the database is group-committed per event-loop turn
// (src/ledger/llm-ledger.ts), so this also exercises float growth, refusals and finishes mixed across accounts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { sql } from "drizzle-orm";
import { databaseFor, dialects, skipNote } from "../support/services";
import { ledgerOf, MICROS, PRICES, startEnv, stopEnv, type Env } from "./support";

const C = PRICES["gpt-5.2"];
const B_STREAM = 19 * C.input + 7 * C.output; // B_stream.sse usage
const MAX_TOKENS = 1000;

for (const d of dialects) {
  skipNote("Postgres", d.available, "LLM metering under concurrency on Postgres");
  describe.skipIf(!d.available)(`LLM metering under concurrency on ${d.name}`, () => {
    let e: Env;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const target = await databaseFor(d.name);
      drop = target.drop;
      e = await startEnv({ env: { DATABASE_URL: target.url } });
    });
    afterAll(async () => {
      await stopEnv(e);
      await drop();
    });

    test("60 concurrent streams against a wallet covering some: exact charges, 402s, books balance", async () => {
      // Each request holds about MAX_TOKENS × output price plus an input estimate; fund roughly 20 of them.
      const perHold = MAX_TOKENS * C.output;
      const credits = Math.floor((20.5 * perHold) / MICROS);
      const { accountId, key } = await e.gw.account(credits, { rateRequests: 1000, rateWindowSeconds: 10 });
      const other = await e.gw.account(100, { rateRequests: 1000, rateWindowSeconds: 10 }); // a second wallet in the same batches
      const client = (k: string) => new OpenAI({ apiKey: k, baseURL: e.gw.url + "/v1", maxRetries: 0 });
      const ask = {
        model: "gpt-5.2",
        max_completion_tokens: MAX_TOKENS,
        stream: true as const,
        messages: [{ role: "user" as const, content: "Hello" }],
      };
      const run = async (k: string) => {
        try {
          const stream = await client(k).chat.completions.create(ask);
          for await (const _ of stream);
          return "ok";
        } catch (err) {
          return (err as any).status === 402 ? "402" : String(err);
        }
      };
      const results = await Promise.all([
        ...Array.from({ length: 60 }, () => run(key)),
        ...Array.from({ length: 5 }, () => run(other.key)),
      ]);
      const mine = results.slice(0, 60);
      const ok = mine.filter((r) => r === "ok").length;
      expect(mine.filter((r) => r !== "ok" && r !== "402")).toEqual([]);
      expect(ok).toBeGreaterThanOrEqual(20); // at least what the wallet covers at once (settles free room for more)
      expect(results.slice(60)).toEqual(["ok", "ok", "ok", "ok", "ok"]);

      // Refused requests never got a line; each admitted one is charged the fixture's usage, by the usage entry of
      // its commit (several calls share one), and the entries add up to the calls.
      const { calls, charges, wallet } = await ledgerOf(e.gw, accountId, 10_000);
      expect(calls.map((c) => c.cost)).toEqual(Array(ok).fill(B_STREAM));
      const entryIds = new Set(charges.map((c) => c.id));
      expect(calls.every((c) => entryIds.has(c.entry_id!))).toBe(true);
      expect(charges.reduce((n, c) => n - c.amount, 0)).toBe(ok * B_STREAM);
      expect(Number(wallet.held)).toBe(0);
      expect(Number(wallet.balance)).toBe(credits * MICROS - ok * B_STREAM);
      expect(Number(wallet.balance)).toBeGreaterThanOrEqual(0);
      expect(await e.gw.ctx.ledger.check()).toEqual([]);
      // Only the admitted requests reached the upstream; each one has its usage record.
      const records = await e.gw.ctx.db.all(
        sql`select status, cost from usage_records where account_id = ${accountId}`,
      );
      expect(records.length).toBe(ok);
      expect(records.map((r: any) => [r.status, Number(r.cost)])).toEqual(Array(ok).fill(["ok", B_STREAM]));
    }, 60_000);

    test("posted credits and upstream errors move /metrics", async () => {
      const sample = async (name: string, labels: string) => {
        const text = await (await fetch(e.gw.url + "/metrics")).text();
        const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
        return line ? Number(line.split(" ").pop()) : 0;
      };
      const { key } = await e.gw.account(100);
      const client = new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
      const postedBefore = await sample("switchyard_credits_settled_micro_credits_total", 'kind="llm"');
      await client.chat.completions.create({
        model: "gpt-5.2",
        max_completion_tokens: 64,
        messages: [{ role: "user", content: "hi" }],
      });
      // Counted once committed, which may be just after the answer (a Postgres commit awaits the network).
      const charged = (1543 - 1408) * C.input + 1408 * C.cacheRead + 10 * C.output;
      let posted = 0;
      for (let i = 0; i < 100 && posted !== charged; i++, await Bun.sleep(10))
        posted = (await sample("switchyard_credits_settled_micro_credits_total", 'kind="llm"')) - postedBefore;
      expect(posted).toBe(charged);
      const errorsBefore = await sample("switchyard_upstream_errors_total", 'provider="openai",kind="status_5xx"');
      e.fake.enqueue({ kind: "error", status: 500 });
      await client.chat.completions
        .create({ model: "gpt-5.2", max_completion_tokens: 64, messages: [{ role: "user", content: "hi" }] })
        .catch(() => {});
      expect(
        (await sample("switchyard_upstream_errors_total", 'provider="openai",kind="status_5xx"')) - errorsBefore,
      ).toBe(1);
    });
  });
}
