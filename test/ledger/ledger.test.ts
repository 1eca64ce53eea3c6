import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Accounts } from "../../src/accounts/service";
import { openDatabase, type Db } from "../../src/db/client";
import { ApiError } from "../../src/http/errors";
import { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT } from "../../src/ledger/units";
import { databaseFor, dialects, skipNote, useLedgerDatabase } from "../support/services";

for (const d of dialects) {
  skipNote("Postgres", d.available, "ledger invariants on Postgres");
  describe.skipIf(!d.available)(`ledger on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    useLedgerDatabase(d.name, (t) => ({ db, ledger, accounts } = t));

    const entriesSum = async (accountId: string) =>
      Number(
        (await db.get<any>(sql`select coalesce(sum(amount), 0) as s from entries where account_id = ${accountId}`))!.s,
      );

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
      await Promise.all(holds.map((h, i) => (i % 2 ? ledger.post(h.id, 400_000) : ledger.void(h.id))));
      const after = (await ledger.balance(a.id))!;
      expect(after.held).toBe(0);
      expect(after.balance).toBe(70 * MICROS_PER_CREDIT - 35 * 400_000);
      expect(await entriesSum(a.id)).toBe(after.balance);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("post and void are idempotent by hold id", async () => {
      const a = await accounts.createAccount("idem", 10 * MICROS_PER_CREDIT);
      const h = await ledger.hold(a.id, 3 * MICROS_PER_CREDIT, "llm", null, 60_000);
      const first = await ledger.post(h.id, 2 * MICROS_PER_CREDIT);
      const twice = await Promise.all([
        ledger.post(h.id, 2 * MICROS_PER_CREDIT),
        ledger.void(h.id),
        ledger.post(h.id, 1),
      ]);
      expect(first.applied).toBe(true);
      expect(twice.map((r) => r.applied)).toEqual([false, false, false]);
      expect(await ledger.balance(a.id)).toEqual({
        balance: 8 * MICROS_PER_CREDIT,
        held: 0,
        available: 8 * MICROS_PER_CREDIT,
      });

      const h2 = await ledger.hold(a.id, MICROS_PER_CREDIT, "task", null, 60_000);
      expect((await ledger.void(h2.id)).applied).toBe(true);
      expect((await ledger.void(h2.id)).applied).toBe(false);
      expect((await ledger.post(h2.id, 5)).applied).toBe(false);
      expect((await ledger.balance(a.id))!.balance).toBe(8 * MICROS_PER_CREDIT);
      expect(await entriesSum(a.id)).toBe(8 * MICROS_PER_CREDIT);
    });

    test("settling above the hold charges the actual amount and records the overrun", async () => {
      const a = await accounts.createAccount("overrun", 10 * MICROS_PER_CREDIT);
      const h = await ledger.hold(a.id, 1_000, "llm", null, 60_000);
      await ledger.post(h.id, 1_500);
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
      expect(await ledger.balance(a.id)).toEqual({
        balance: 5 * MICROS_PER_CREDIT,
        held: MICROS_PER_CREDIT,
        available: 4 * MICROS_PER_CREDIT,
      });
    });

    test("a correction cannot take available below zero; the check finds a tampered wallet", async () => {
      const a = await accounts.createAccount("correct", 2 * MICROS_PER_CREDIT);
      await expect(ledger.credit(a.id, -3 * MICROS_PER_CREDIT, "correction", "oops")).rejects.toMatchObject({
        code: "correction_exceeds_available",
      });
      await ledger.credit(a.id, -MICROS_PER_CREDIT, "correction", "refund error");
      expect(await ledger.check(a.id)).toEqual([]);
      await db.run(sql`update wallets set balance = balance + 1 where account_id = ${a.id}`);
      const bad = await ledger.check(a.id);
      expect(bad).toHaveLength(1);
      const wallet = bad[0]!;
      if (!("balance" in wallet)) throw new Error("expected a wallet mismatch");
      expect(wallet.balance - wallet.entriesSum).toBe(1);
    });

    test("a wallet in debt after an overrun takes a top-up smaller than its debt (it pays it off in parts)", async () => {
      const a = await accounts.createAccount("in-debt", MICROS_PER_CREDIT);
      const hold = await ledger.hold(a.id, MICROS_PER_CREDIT, "task", null, 60_000);
      await ledger.post(hold.id, 3 * MICROS_PER_CREDIT); // overrun: available is now −2 credits
      expect(await ledger.credit(a.id, MICROS_PER_CREDIT, "topup", "part")).toMatchObject({
        available: -MICROS_PER_CREDIT,
      });
      await expect(ledger.credit(a.id, -1, "correction", "more")).rejects.toMatchObject({
        code: "correction_exceeds_available",
      });
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a top-up that would take the balance past 2^53 − 1 µcr (no longer exact) is refused, and nothing changes", async () => {
      const a = await accounts.createAccount("rich", 0);
      const most = Number.MAX_SAFE_INTEGER - 5;
      await ledger.credit(a.id, most, "topup", "big");
      await expect(ledger.credit(a.id, 6, "topup", "one too many")).rejects.toMatchObject({
        status: 422,
        code: "balance_too_large",
      });
      expect(await ledger.balance(a.id)).toMatchObject({ balance: most });
      await ledger.credit(a.id, 5, "topup", "to the limit");
      expect(await ledger.balance(a.id)).toMatchObject({ balance: Number.MAX_SAFE_INTEGER });
      expect(await ledger.check(a.id)).toEqual([]);
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
