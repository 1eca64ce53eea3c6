import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Accounts } from "../../src/accounts/service";
import { openDatabase, type Db } from "../../src/db/client";
import { ApiError } from "../../src/http/errors";
import { Ledger, type BatchOutcome, type FinishRequest, type Hold, type HoldRequest } from "../../src/ledger/service";
import { MICROS_PER_CREDIT } from "../../src/ledger/units";
import { databaseFor, dialects, skipNote } from "../support/services";

for (const d of dialects) {
  skipNote("Postgres", d.available, "ledger invariants on Postgres");
  describe.skipIf(!d.available)(`ledger on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      const target = await databaseFor(d.name);
      drop = target.drop;
      db = await openDatabase(target.url);
      ledger = new Ledger(db);
      accounts = new Accounts(db, ledger);
    });
    afterAll(async () => {
      await db.close();
      await drop();
    });

    const entriesSum = async (accountId: string) =>
      Number((await db.get<any>(sql`select coalesce(sum(amount), 0) as s from entries where account_id = ${accountId}`))!.s);

    test("200 concurrent holds never overspend; balance equals the sum of entries", async () => {
      const a = await accounts.createAccount("concurrent", 70 * MICROS_PER_CREDIT); // covers 70 holds of 1 credit
      const results = await Promise.allSettled(
        Array.from({ length: 200 }, (_, i) => ledger.hold(a.id, MICROS_PER_CREDIT, "llm", `r${i}`, 60_000)),
      );
      const ok = results.filter((r) => r.status === "fulfilled");
      const refused = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
      expect(ok.length).toBe(70);
      expect(refused.length).toBe(130);
      for (const r of refused) {
        expect(r.reason).toBeInstanceOf(ApiError);
        expect(r.reason.code).toBe("insufficient_credits");
        expect(r.reason.message).toContain("needs up to 1 credits");
      }
      const b = (await ledger.balance(a.id))!;
      expect(b).toEqual({ balance: 70 * MICROS_PER_CREDIT, held: 70 * MICROS_PER_CREDIT, available: 0 });

      // Settle half of them concurrently for less than held, release the rest: nothing lost, nothing doubled.
      const holds = ok.map((r) => (r as PromiseFulfilledResult<any>).value);
      await Promise.all(holds.map((h, i) => (i % 2 ? ledger.settle(h.id, 400_000) : ledger.release(h.id))));
      const after = (await ledger.balance(a.id))!;
      expect(after.held).toBe(0);
      expect(after.balance).toBe(70 * MICROS_PER_CREDIT - 35 * 400_000);
      expect(await entriesSum(a.id)).toBe(after.balance);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("settle and release are idempotent by hold id", async () => {
      const a = await accounts.createAccount("idem", 10 * MICROS_PER_CREDIT);
      const h = await ledger.hold(a.id, 3 * MICROS_PER_CREDIT, "llm", null, 60_000);
      const first = await ledger.settle(h.id, 2 * MICROS_PER_CREDIT);
      const twice = await Promise.all([ledger.settle(h.id, 2 * MICROS_PER_CREDIT), ledger.release(h.id), ledger.settle(h.id, 1)]);
      expect(first.applied).toBe(true);
      expect(twice.map((r) => r.applied)).toEqual([false, false, false]);
      expect(await ledger.balance(a.id)).toEqual({ balance: 8 * MICROS_PER_CREDIT, held: 0, available: 8 * MICROS_PER_CREDIT });

      const h2 = await ledger.hold(a.id, MICROS_PER_CREDIT, "task", null, 60_000);
      expect((await ledger.release(h2.id)).applied).toBe(true);
      expect((await ledger.release(h2.id)).applied).toBe(false);
      expect((await ledger.settle(h2.id, 5)).applied).toBe(false);
      expect((await ledger.balance(a.id))!.balance).toBe(8 * MICROS_PER_CREDIT);
      expect(await entriesSum(a.id)).toBe(8 * MICROS_PER_CREDIT);
    });

    test("settling above the hold charges the actual amount and records the overrun", async () => {
      const a = await accounts.createAccount("overrun", 10 * MICROS_PER_CREDIT);
      const h = await ledger.hold(a.id, 1_000, "llm", null, 60_000);
      await ledger.settle(h.id, 1_500);
      const row = await db.get<any>(sql`select status, settled, overrun from holds where id = ${h.id}`);
      expect(row).toEqual({ status: "posted", settled: 1_500, overrun: 500 });
      expect((await ledger.balance(a.id))!.balance).toBe(10 * MICROS_PER_CREDIT - 1_500);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("an expired hold is swept back to the wallet; a live one is not", async () => {
      const a = await accounts.createAccount("sweep", 5 * MICROS_PER_CREDIT);
      const stale = await ledger.hold(a.id, 2 * MICROS_PER_CREDIT, "llm", null, 1);
      const live = await ledger.hold(a.id, 1 * MICROS_PER_CREDIT, "llm", null, 600_000);
      await Bun.sleep(5);
      expect(await ledger.sweepExpired(Date.now())).toBeGreaterThanOrEqual(1);
      const status = async (id: string) => (await db.get<any>(sql`select status from holds where id = ${id}`))!.status;
      expect(await status(stale.id)).toBe("voided");
      expect(await status(live.id)).toBe("pending");
      expect(await ledger.balance(a.id)).toEqual({ balance: 5 * MICROS_PER_CREDIT, held: MICROS_PER_CREDIT, available: 4 * MICROS_PER_CREDIT });
    });

    // Ledger.batchIn: the LLM path's group commit (one wallet update per account per batch).
    const C = MICROS_PER_CREDIT;
    const batch = (finishes: FinishRequest[], holds: HoldRequest[]) => db.tx((q) => ledger.batchIn(q, "llm", finishes, holds));
    const want = (accountId: string, ...credits: number[]) => credits.map((c, i) => ({ accountId, amount: c * C, ref: `b${i}`, ttlMs: 60_000 }));
    const granted = (o: BatchOutcome) => o.holds.map((h) => ("hold" in h ? "ok" : h.error.code));

    test("a batch grants an account's holds together when all fit, one by one in order when not", async () => {
      const a = await accounts.createAccount("batch-holds", 10 * C);
      const first = await batch([], want(a.id, 3, 3, 3));
      expect(granted(first)).toEqual(["ok", "ok", "ok"]);
      expect(await ledger.balance(a.id)).toEqual({ balance: 10 * C, held: 9 * C, available: C });
      // 1 credit left: together they do not fit, so each is judged alone and only the first is granted.
      const second = await batch([], want(a.id, 1, 2, 1));
      expect(granted(second)).toEqual(["ok", "insufficient_credits", "insufficient_credits"]);
      expect(await ledger.balance(a.id)).toEqual({ balance: 10 * C, held: 10 * C, available: 0 });
      const ids = [...first.holds, second.holds[0]!].map((h) => (h as { hold: Hold }).hold.id);
      const rows = await db.all<any>(sql`select id, amount, status from holds where account_id = ${a.id}`);
      expect(new Map(rows.map((r) => [r.id, [Number(r.amount), r.status]]))).toEqual(
        new Map([[ids[0], [3 * C, "pending"]], [ids[1], [3 * C, "pending"]], [ids[2], [3 * C, "pending"]], [ids[3], [C, "pending"]]]),
      );
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a batch's finishes run before its holds, each exactly once, and the books balance", async () => {
      const a = await accounts.createAccount("batch-finish", 10 * C);
      const [x, y, z] = (await batch([], want(a.id, 3, 3, 3))).holds.map((h) => (h as { hold: Hold }).hold);
      // Settle below, release, settle above (an overrun) and a second settle of x: and a new 3-credit hold that
      // fits only because the finishes return money first.
      const out = await batch(
        [
          { hold: x!, charge: 2 * C, reason: "t" },
          { hold: y!, charge: null, reason: "t" },
          { hold: z!, charge: 4 * C, reason: "t" },
          { hold: x!, charge: 2 * C, reason: "t" },
        ],
        want(a.id, 3),
      );
      expect(out.finished.map((f) => [f.applied, f.charged])).toEqual([[true, 2 * C], [true, 0], [true, 4 * C], [false, 0]]);
      expect(granted(out)).toEqual(["ok"]);
      expect(await ledger.balance(a.id)).toEqual({ balance: 4 * C, held: 3 * C, available: C });
      expect(await entriesSum(a.id)).toBe(4 * C);
      const overrun = await db.get<any>(sql`select settled, overrun from holds where id = ${z!.id}`);
      expect([Number(overrun.settled), Number(overrun.overrun)]).toEqual([4 * C, C]);
      // A later batch cannot finish them again.
      const again = await batch([{ hold: y!, charge: C, reason: "t" }, { hold: z!, charge: null, reason: "t" }], []);
      expect(again.finished.map((f) => f.applied)).toEqual([false, false]);
      expect((await ledger.balance(a.id))!.balance).toBe(4 * C);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("concurrent batches over two wallets, in either order, never overspend or deadlock", async () => {
      const a = await accounts.createAccount("batch-a", 20 * C);
      const b = await accounts.createAccount("batch-b", 20 * C);
      const runs = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) => batch([], i % 2 ? [...want(a.id, 1, 1), ...want(b.id, 1)] : [...want(b.id, 1, 1), ...want(a.id, 1)])),
      );
      expect(runs.filter((r) => r.status === "rejected")).toEqual([]);
      const okCount = runs.flatMap((r) => granted((r as PromiseFulfilledResult<BatchOutcome>).value)).filter((g) => g === "ok").length;
      expect(okCount).toBe(40); // 60 asked, 20 + 20 fit
      for (const id of [a.id, b.id]) expect(await ledger.balance(id)).toEqual({ balance: 20 * C, held: 20 * C, available: 0 });
      // And settling them all concurrently, batch by batch, charges each exactly once.
      const all = runs.flatMap((r) => (r as PromiseFulfilledResult<BatchOutcome>).value.holds.flatMap((h) => ("hold" in h ? [h.hold] : [])));
      await Promise.all(all.map((h) => batch([{ hold: h, charge: C / 2, reason: "t" }, { hold: h, charge: C, reason: "t" }], [])));
      for (const id of [a.id, b.id]) {
        expect(await ledger.balance(id)).toEqual({ balance: 10 * C, held: 0, available: 10 * C });
        expect(await ledger.check(id)).toEqual([]);
      }
    });

    test("a correction cannot take available below zero; the check finds a tampered wallet", async () => {
      const a = await accounts.createAccount("correct", 2 * MICROS_PER_CREDIT);
      await expect(ledger.credit(a.id, -3 * MICROS_PER_CREDIT, "correction", "oops")).rejects.toMatchObject({ code: "correction_exceeds_available" });
      await ledger.credit(a.id, -MICROS_PER_CREDIT, "correction", "refund error");
      expect(await ledger.check(a.id)).toEqual([]);
      await db.run(sql`update wallets set balance = balance + 1 where account_id = ${a.id}`);
      const bad = await ledger.check(a.id);
      expect(bad).toHaveLength(1);
      expect(bad[0]!.balance - bad[0]!.entriesSum).toBe(1);
    });
  });
}

describe("ledger on sqlite across concurrent writers", () => {
  test("4 workers × 50 holds on one SQLite file never overspend", async () => {
    const { url } = await databaseFor("sqlite");
    const db = await openDatabase(url);
    const ledger = new Ledger(db);
    const a = await new Accounts(db, ledger).createAccount("workers", 120 * 1_000);
    const runs = Array.from({ length: 4 }, () => {
      const w = new Worker(new URL("../support/hold-worker.ts", import.meta.url));
      return new Promise<number>((resolve, reject) => {
        w.onmessage = (e) => (resolve(e.data.ok), w.terminate());
        w.onerror = (e) => reject(e);
        w.postMessage({ url, accountId: a.id, count: 50, amount: 2_000 });
      });
    });
    const held = (await Promise.all(runs)).reduce((s, n) => s + n, 0);
    const b = (await ledger.balance(a.id))!;
    expect(b.available).toBeGreaterThanOrEqual(0);
    expect(b.available).toBeLessThan(2_000);
    expect(held).toBeGreaterThanOrEqual(60);
    expect(await ledger.check(a.id)).toEqual([]);
    await db.close();
  });
});
