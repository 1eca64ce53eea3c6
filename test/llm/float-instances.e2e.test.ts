// Two gateway processes on one wallet, on one SQLite file and on one Postgres database: each process's LLM float
// holds credits ahead for that wallet's next calls, and a small wallet must still serve every call it can cover on
// either process (the other's spare room is asked back, ledger/float.ts), refuse one it truly cannot with the credits
// truly available, and never be overspent.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { spawnGateway, type GatewayProcess } from "../support/process";
import { databaseFor, dialects, skipNote } from "../support/services";
import { MICROS, PRICES, providerEnv } from "./support";

const ADMIN = "float-instances-admin-token-0123";
const C = PRICES["gpt-5.2"];
const CHARGE = (1543 - 1408) * C.input + 1408 * C.cacheRead + 10 * C.output; // B_nonstream.json usage
const MAX_TOKENS = 1000; // a hold of ~14 credits against a charge of ~0.62: the wallets below are small beside it

const fake = startFakeLlmUpstream();
afterAll(() => fake.stop());

async function account(url: string, credits: number) {
  const h = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
  const a = await (await fetch(url + "/admin/v1/accounts", { method: "POST", headers: h, body: JSON.stringify({ name: "f", credits }) })).json();
  const k = await (await fetch(`${url}/admin/v1/accounts/${a.id}/keys`, { method: "POST", headers: h, body: JSON.stringify({ name: "k" }) })).json();
  return { accountId: a.id as string, key: k.key as string };
}

async function chat(gw: GatewayProcess, key: string) {
  const r = await fetch(gw.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-5.2", max_completion_tokens: MAX_TOKENS, messages: [{ role: "user", content: "Hi" }] }),
  });
  return { status: r.status, body: (await r.json()) as any };
}

for (const d of dialects) {
  skipNote("Postgres", d.available, "two gateway processes on one wallet on Postgres");
  describe.skipIf(!d.available)(`two gateway processes on one wallet (${d.name})`, () => {
    test("a small wallet serves every call it covers on either process, refuses one it cannot with what is truly available, and is never overspent", async () => {
      const target = await databaseFor(d.name);
      // Floats kept while in use, as a busy wallet's are (not returned idle between the calls below).
      const env = { ...providerEnv(fake.url), DATABASE_URL: target.url, ADMIN_TOKEN: ADMIN, DEFAULT_RATE_LIMIT: "10000/10s", LEDGER_FLOAT_IDLE_MS: "600000" };
      const one = await spawnGateway(env);
      const two = await spawnGateway(env);
      let stopped = false;
      try {
        // 24 credits cover one call's hold (~14) with room for a dozen charges, not two holds at once.
        const small = await account(one.url, 24);
        const served: number[] = [];
        for (let i = 0; i < 12; i++) {
          const r = await chat(i % 2 ? two : one, small.key);
          if (r.status !== 200) throw new Error(`call ${i} on process ${(i % 2) + 1}: ${r.status} ${JSON.stringify(r.body)}`);
          served.push(r.status);
        }
        expect(served).toEqual(Array(12).fill(200));

        // A wallet that truly cannot cover a second call while the first is in flight on the other process: refused,
        // stating the balance less the call in flight (the other process's spare room is not counted as spent).
        const tight = await account(one.url, 24);
        fake.enqueue({ kind: "ok", headersDelayMs: 4000 });
        let firstDone = false;
        const first = chat(one, tight.key).finally(() => (firstDone = true));
        const db = await openDatabase(target.url);
        try {
          // The first call has its hold once the wallet shows it held.
          for (let i = 0; i < 400; i++, await Bun.sleep(5)) if (Number((await db.get<any>(sql`select held from wallets where account_id = ${tight.accountId}`))!.held)) break;
          const refused = await chat(two, tight.key);
          expect(firstDone).toBe(false); // the first call was in flight throughout
          expect((await first).status).toBe(200);
          // What the call in flight reserved, from its line in the ledger (the other process commits it at once).
          let held: number | null = null;
          for (let i = 0; i < 400 && held === null; i++, await Bun.sleep(5)) {
            const line = await db.get<any>(sql`select held from usage_records where account_id = ${tight.accountId}`);
            if (line) held = Number(line.held);
          }
          expect(refused.status).toBe(402);
          expect(refused.body.error.message).toBe(`Insufficient credits: this request needs up to ${held! / MICROS} credits and ${(24 * MICROS - held!) / MICROS} are available.`);
        } finally {
          await db.close();
        }
        // Many calls at once on both processes against a wallet covering three holds: each one served or refused
        // with 402 (no other error), and the wallet never spent beyond what it has (checked below).
        const busy = await account(one.url, 45);
        const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => chat(i % 2 ? two : one, busy.key)));
        expect(burst.filter((r) => r.status !== 200 && r.status !== 402)).toEqual([]);
        const busyServed = burst.filter((r) => r.status === 200).length;
        expect(busyServed).toBeGreaterThanOrEqual(3);

        await one.stop();
        await two.stop();
        stopped = true;

        // After both processes stopped (their floats go back at shutdown): every served call charged once, nothing
        // overspent, the books balanced.
        const after = await openDatabase(target.url);
        try {
          const wallet = async (id: string) => (await after.get<any>(sql`select balance, held from wallets where account_id = ${id}`))!;
          const costs = async (id: string) => (await after.all<any>(sql`select cost from usage_records where account_id = ${id}`)).map((r) => Number(r.cost));
          expect(await costs(small.accountId)).toEqual(Array(12).fill(CHARGE));
          expect(await costs(tight.accountId)).toEqual([CHARGE]);
          expect(await costs(busy.accountId)).toEqual(Array(busyServed).fill(CHARGE));
          for (const [a, n, credits] of [[small.accountId, 12, 24], [tight.accountId, 1, 24], [busy.accountId, busyServed, 45]] as const) {
            const w = await wallet(a);
            expect([Number(w.balance), Number(w.held)]).toEqual([credits * MICROS - n * CHARGE, 0]);
            expect(Number(w.balance)).toBeGreaterThanOrEqual(0);
          }
          expect(await new Ledger(after).check()).toEqual([]);
        } finally {
          await after.close();
        }
      } finally {
        if (!stopped) await Promise.all([one.stop(), two.stop()]);
        await target.drop();
      }
    }, 60_000);
  });
}
