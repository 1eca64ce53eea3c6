// The LLM path's float (src/ledger/float.ts, driven by src/ledger/llm-ledger.ts), on SQLite and Postgres: calls
// reserve from a durable per-process hold in memory, and the ledger's guarantees still hold at every commit:
// no overspend (also across two processes on one database), each call settled once with its own line (its usage
// record: held, cost, and the usage entry of its batch), the books balancing (Ledger.check, which also sums every
// usage entry's lines), the float going back when idle, and a crashed process's float swept after its expiry.
// How the float gives back spare room across processes is in float-spare-room.test.ts.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import type { Reservation } from "../../src/ledger/float";
import { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { silentLogger } from "../../src/log";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import { fromFloat, newLlmLedger } from "../support/llm-ledger";
import type { Finish } from "../../src/llm/records";
import { dialects, skipNote } from "../support/services";
import { useLlmFloat } from "../support/llm-float";

for (const d of dialects) {
  skipNote("Postgres", d.available, "the LLM float on Postgres");
  describe.skipIf(!d.available)(`LLM float on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    const { processOf, rid, finish, wallet, holdsOf, linesOf, usageEntriesOf, idle } = useLlmFloat(
      d.name,
      (t) => ({ db, ledger, accounts } = t),
    );

    test("the first call grows the float; the next ones reserve in memory; each posts once with its own line", async () => {
      const a = await accounts.createAccount("float-basic", 100 * C);
      const b = processOf();
      expect(b.isFreePath(a.id, C)).toBe(false); // no float yet: it waits for the commit that creates one
      const r1 = await b.hold(a.id, C, rid("r1"));
      const [float] = await holdsOf(a.id, "float");
      expect(float!.status).toBe("pending");
      expect(float!.amount).toBeGreaterThanOrEqual(C);
      expect((await wallet(a.id)).held).toBe(float!.amount);
      const held = fromFloat(b, a.id, C, rid("r2")); // served from the float, no database work
      expect(held).toBeInstanceOf(Promise); // always a promise: already resolved on the free path
      const r2 = await held;
      finish(b, r1, C / 2);
      finish(b, r1, C); // a second finish of the same call changes nothing
      finish(b, r2, null);
      await b.drain();
      const [entry] = await usageEntriesOf(a.id);
      expect(entry!.amount).toBe(-C / 2);
      expect(await linesOf(a.id)).toEqual([
        { id: r1.id, held: C, cost: C / 2, entry: entry!.id },
        { id: r2.id, held: C, cost: 0, entry: null },
      ]);
      expect(await holdsOf(a.id, "llm")).toEqual([]); // no hold row per call: the float is the only hold
      expect(await ledger.check(a.id)).toEqual([]); // held = the float's amount, balance = the entries
      await idle(a.id); // LEDGER_FLOAT_IDLE_MS later the float goes back
      expect(await wallet(a.id)).toEqual({ balance: 100 * C - C / 2, held: 0 });
      expect((await holdsOf(a.id, "float")).map((h) => h.status)).toEqual(["voided"]);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("Ledger.check finds a usage entry its lines do not add up to (a line altered, or lost)", async () => {
      const a = await accounts.createAccount("float-lines", 10 * C);
      const b = processOf();
      const [r1, r2] = [await b.hold(a.id, C, rid("l1")), await b.hold(a.id, C, rid("l2"))];
      finish(b, r1, 300);
      finish(b, r2, 200);
      await b.drain();
      const [entry] = await usageEntriesOf(a.id);
      expect(entry!.amount).toBe(-500); // both calls in one commit: one entry
      expect(await ledger.check(a.id)).toEqual([]);
      await db.run(sql`update usage_records set cost = 250 where id = ${r2.id}`);
      expect(await ledger.check(a.id)).toEqual([
        { accountId: a.id, entryId: entry!.id, entryAmount: -500, linesSum: 550 },
      ]);
      await db.run(sql`delete from usage_records where id = ${r2.id}`);
      expect(await ledger.check(a.id)).toEqual([
        { accountId: a.id, entryId: entry!.id, entryAmount: -500, linesSum: 300 },
      ]);
      await db.run(sql`update entries set amount = -300 where id = ${entry!.id}`); // leave the books as they were
      await db.run(sql`update wallets set balance = balance + 200 where account_id = ${a.id}`);
    });

    test("two processes on one database, 60 calls against a wallet covering 20: never overspent, no deadlock", async () => {
      const a = await accounts.createAccount("float-a", Math.floor(20.5 * C));
      const other = await accounts.createAccount("float-b", 100 * C);
      const [p1, p2] = [processOf(), processOf()];
      // Each process asks for both wallets, in opposite orders: their batches must still not deadlock on Postgres.
      const ask = (b: LlmLedger<Finish>, n: number, first: string, second: string) =>
        Array.from({ length: n }, (_, i) =>
          b.hold(i % 2 ? first : second, C, rid(`x${i}`)).then(
            (r) => ({ b, r }),
            (e) => e,
          ),
        );
      const results = await Promise.all([
        ...ask(p1, 30, a.id, other.id),
        ...ask(p1, 30, a.id, a.id),
        ...ask(p2, 30, other.id, a.id),
        ...ask(p2, 30, a.id, a.id),
      ]);
      const granted = results.filter((x): x is { b: LlmLedger<Finish>; r: Reservation } => "r" in x);
      const refused = results.filter((x) => !("r" in x));
      const onA = granted.filter((g) => g.r.accountId === a.id);
      expect(onA.length).toBe(20);
      expect(granted.length - onA.length).toBe(30); // the other wallet had room for all of its calls
      for (const e of refused) expect(e).toMatchObject({ status: 402, code: "insufficient_credits" });
      for (const { b, r } of granted) finish(b, r, C);
      await Promise.all([p1.drain(), p2.drain()]);
      // Each process commits its calls in batches: per wallet and commit one usage entry, summing its lines.
      expect((await linesOf(a.id)).map((l) => l.cost)).toEqual(Array(20).fill(C));
      expect((await usageEntriesOf(a.id)).reduce((n, e) => n - e.amount, 0)).toBe(20 * C);
      await idle(a.id);
      await idle(other.id);
      expect(await wallet(a.id)).toEqual({ balance: Math.floor(20.5 * C) - 20 * C, held: 0 });
      expect(await wallet(other.id)).toEqual({ balance: 70 * C, held: 0 });
      expect(await ledger.check()).toEqual([]);
    });

    test("a call that reserves nothing is served at once, even from an empty wallet; what it is charged still counts", async () => {
      const a = await accounts.createAccount("float-zero", 0);
      const b = processOf();
      const r = await fromFloat(b, a.id, 0, rid("free"));
      finish(b, r, 5);
      await b.drain();
      expect(await wallet(a.id)).toEqual({ balance: -5, held: 0 });
      expect(await linesOf(a.id)).toEqual([{ id: r.id, held: 0, cost: 5, entry: (await usageEntriesOf(a.id))[0]!.id }]);
      expect(await holdsOf(a.id, "float")).toEqual([]);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a call charged above what it reserved: the float gives its reservation, the balance the rest", async () => {
      const a = await accounts.createAccount("float-overrun", 10 * C);
      const b = processOf();
      const r = await b.hold(a.id, C, rid("r1"));
      const floatBefore = (await holdsOf(a.id, "float"))[0]!.amount;
      finish(b, r, C + C / 2);
      await b.drain();
      expect((await linesOf(a.id)).map((l) => [l.held, l.cost])).toEqual([[C, C + C / 2]]); // the overrun: cost − held
      expect((await holdsOf(a.id, "float"))[0]!.amount).toBe(floatBefore - C);
      expect((await wallet(a.id)).balance).toBe(10 * C - C - C / 2);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a refusal states what the float and the wallet have together", async () => {
      const a = await accounts.createAccount("float-402", 3 * C);
      const b = processOf();
      await b.hold(a.id, 2 * C, rid("r1"));
      await expect(b.hold(a.id, 2 * C, rid("r2"))).rejects.toMatchObject({
        status: 402,
        message: expect.stringContaining("needs up to 2 credits and 1 are available"),
      });
    });

    test("a float in use keeps its expiry ahead even when no call is in flight as it is looked at, and none is charged", async () => {
      // Calls that come and go between two looks of the float's tender, all released (an upstream failing fast):
      // the float never goes idle, and none of them moves its expiry by a charge.
      const a = await accounts.createAccount("float-busy-released", 10 * C);
      const b = processOf({ ttlSeconds: 0.3, idleMs: 60_000 });
      const first = await b.hold(a.id, C, rid("r1"));
      finish(b, first, null);
      const until = Date.now() + 700;
      while (Date.now() < until) {
        const r = b.hold(a.id, C, rid("rn"));
        finish(b, await r, null);
        await Bun.sleep(5);
      }
      await b.drain();
      expect(await ledger.sweepExpired(Date.now(), ["float"])).toBe(0);
      expect((await holdsOf(a.id, "float")).map((h) => h.status)).toEqual(["pending"]);
    });

    test("a crashed process's float is swept after its expiry; a live one keeps its expiry ahead", async () => {
      const a = await accounts.createAccount("float-crash", 10 * C);
      const crashed = processOf({ ttlSeconds: 0.2 });
      const r = await crashed.hold(a.id, C, rid("r1"));
      clearInterval((crashed as any).maintenanceTimer); // the process is gone: nothing refreshes or returns its float
      const live = processOf({ ttlSeconds: 0.2 });
      const b = await accounts.createAccount("float-live", 10 * C);
      const rl = await live.hold(b.id, C, rid("r2"));
      await Bun.sleep(400);
      expect(await ledger.sweepExpired(Date.now(), ["float"])).toBe(1);
      expect(await wallet(a.id)).toEqual({ balance: 10 * C, held: 0 });
      // The call of the crashed float still settling (it was only slow): charged from the balance alone.
      finish(crashed, r, C / 4);
      await crashed.drain();
      expect(await wallet(a.id)).toEqual({ balance: 10 * C - C / 4, held: 0 });
      expect(await ledger.check(a.id)).toEqual([]);
      // The live one's call completes normally.
      finish(live, rl, C / 4);
      await live.drain();
      await idle(b.id);
      expect(await wallet(b.id)).toEqual({ balance: 10 * C - C / 4, held: 0 });
      expect(await ledger.check(b.id)).toEqual([]);
    });
  });
}

test("when the database fails, a call waiting for its hold gets 503 ledger_unavailable (not a 500) and nothing is charged", async () => {
  const errors: string[] = [];
  const log = { ...silentLogger, error: (msg: string) => errors.push(msg) };
  const failing = () => Promise.reject(new Error("disk I/O error"));
  const db = { tx: failing, run: failing, all: failing, get: failing };
  const b = newLlmLedger(db, { voidIn: Ledger.prototype.voidIn }, { floatIdleMs: 30 }, log);
  await expect(b.hold("acct_x", 1000, "r1")).rejects.toMatchObject({ status: 503, code: "ledger_unavailable" });
  expect(errors).toContain("llm ledger batch failed");
  await b.close(100);
});
