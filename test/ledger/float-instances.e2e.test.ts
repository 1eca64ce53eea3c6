// Two gateway processes on one wallet, on one SQLite file and on one Postgres database: each process's LLM float
// holds credits ahead for that wallet's next calls, and a small wallet must still serve every call it can cover on
// either process (the other's spare room is asked back, ledger/float-asks.ts), refuse one it truly cannot with the credits
// truly available, and never be overspent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { spawnGateway, type GatewayProcess } from "../support/process";
import { databaseFor, dialects, skipNote } from "../support/services";
import { MICROS, PRICES, providerEnv } from "../llm/support";

const ADMIN = "float-instances-admin-token-0123";
const C = PRICES["gpt-5.2"];
const CHARGE = (1543 - 1408) * C.input + 1408 * C.cacheRead + 10 * C.output; // B_nonstream.json usage
const MAX_TOKENS = 1000; // a hold of ~14 credits against a charge of ~0.62: the wallets below are small beside it

const fake = startFakeLlmUpstream();
afterAll(() => fake.stop());

async function account(url: string, credits: number) {
  const headers = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
  const created = (await (
    await fetch(url + "/admin/v1/accounts", { method: "POST", headers, body: JSON.stringify({ name: "f", credits }) })
  ).json()) as { id: string };
  const key = (await (
    await fetch(`${url}/admin/v1/accounts/${created.id}/keys`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "k" }),
    })
  ).json()) as { key: string };
  return { accountId: created.id, key: key.key };
}

async function chat(gw: GatewayProcess, key: string) {
  const r = await fetch(gw.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "gpt-5.2",
      max_completion_tokens: MAX_TOKENS,
      messages: [{ role: "user", content: "Hi" }],
    }),
  });
  return { status: r.status, body: (await r.json()) as any };
}

for (const d of dialects) {
  skipNote("Postgres", d.available, "two gateway processes on one wallet on Postgres");
  describe.skipIf(!d.available)(`two gateway processes on one wallet (${d.name})`, () => {
    let target: { url: string; drop: () => Promise<void> };
    let one: GatewayProcess;
    let two: GatewayProcess;
    let stopped = false;
    /** What each test's wallet was given and how many of its calls were served: checked once both have stopped. */
    const wallets: Array<{ accountId: string; credits: number; served: number }> = [];
    beforeAll(async () => {
      target = await databaseFor(d.name);
      // Floats kept while in use, as a busy wallet's are (not returned idle between the calls below).
      const env = {
        ...providerEnv(fake.url),
        DATABASE_URL: target.url,
        ADMIN_TOKEN: ADMIN,
        DEFAULT_RATE_LIMIT: "10000/10s",
        LEDGER_FLOAT_IDLE_MS: "600000",
      };
      [one, two] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    }, 45_000);
    afterAll(async () => {
      if (!stopped) await Promise.all([one?.stop(), two?.stop()]);
      await target.drop();
    }, 30_000);

    test("a small wallet serves every call it can cover, on one process after the other", async () => {
      // 24 credits cover one call's hold (~14) with room for a dozen charges, not two holds at once.
      const small = await account(one.url, 24);
      const served: number[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await chat(i % 2 ? two : one, small.key);
        if (r.status !== 200)
          throw new Error(`call ${i} on process ${(i % 2) + 1}: ${r.status} ${JSON.stringify(r.body)}`);
        served.push(r.status);
      }
      expect(served).toEqual(Array(12).fill(200));
      wallets.push({ accountId: small.accountId, credits: 24, served: 12 });
    });

    test("two calls at once, one on each process, on a wallet covering both holds: both served, round after round", async () => {
      // 32 credits: both holds (~28.1) and the charges of three rounds.
      const pair = await account(one.url, 32);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const both = await Promise.all([chat(one, pair.key), chat(two, pair.key)]);
        for (const r of both)
          if (r.status !== 200) throw new Error(`round ${i}: ${r.status} ${JSON.stringify(r.body)}`);
        statuses.push(...both.map((r) => r.status));
      }
      expect(statuses).toEqual(Array(6).fill(200));
      wallets.push({ accountId: pair.accountId, credits: 32, served: 6 });
    });

    test("a call the wallet truly cannot cover is refused, stating the balance less the call in flight on the other process", async () => {
      const tight = await account(one.url, 24);
      fake.enqueue({ kind: "ok", headersDelayMs: 4000 });
      let firstDone = false;
      const first = chat(one, tight.key).finally(() => (firstDone = true));
      const db = await openDatabase(target.url);
      try {
        // The first call has its hold once the wallet shows it held.
        for (let i = 0; i < 400; i++, await Bun.sleep(5))
          if (Number((await db.get<any>(sql`select held from wallets where account_id = ${tight.accountId}`))!.held))
            break;
        const refused = await chat(two, tight.key);
        expect(firstDone).toBe(false); // the first call was in flight throughout
        expect((await first).status).toBe(200);
        // What the call in flight reserved, from its line in the ledger (its process commits it at once).
        let held: number | null = null;
        for (let i = 0; i < 400 && held === null; i++, await Bun.sleep(5)) {
          const line = await db.get<any>(sql`select held from usage_records where account_id = ${tight.accountId}`);
          if (line) held = Number(line.held);
        }
        expect(refused.status).toBe(402);
        expect(refused.body.error.message).toStartWith(
          `Insufficient credits: this request needs up to ${held! / MICROS} credits and ${(24 * MICROS - held!) / MICROS} are available.`,
        );
      } finally {
        await db.close();
      }
      wallets.push({ accountId: tight.accountId, credits: 24, served: 1 });
    });

    test("many calls at once on both processes against a wallet covering three holds: each served or refused with 402", async () => {
      const busy = await account(one.url, 45);
      const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => chat(i % 2 ? two : one, busy.key)));
      expect(burst.filter((r) => r.status !== 200 && r.status !== 402)).toEqual([]);
      const served = burst.filter((r) => r.status === 200).length;
      expect(served).toBeGreaterThanOrEqual(3);
      wallets.push({ accountId: busy.accountId, credits: 45, served });
    });

    test("once both processes have stopped: every served call charged once, nothing overspent or held, the books balanced", async () => {
      await Promise.all([one.stop(), two.stop()]); // their floats go back at shutdown
      stopped = true;
      expect(wallets).toHaveLength(4);
      const db = await openDatabase(target.url);
      try {
        for (const { accountId, credits, served } of wallets) {
          const costs = (await db.all<any>(sql`select cost from usage_records where account_id = ${accountId}`)).map(
            (r) => Number(r.cost),
          );
          expect(costs).toEqual(Array(served).fill(CHARGE));
          const w = (await db.get<any>(sql`select balance, held from wallets where account_id = ${accountId}`))!;
          expect([Number(w.balance), Number(w.held)]).toEqual([credits * MICROS - served * CHARGE, 0]);
          expect(Number(w.balance)).toBeGreaterThanOrEqual(0);
        }
        expect(await new Ledger(db).check()).toEqual([]);
      } finally {
        await db.close();
      }
    });
  });
}
