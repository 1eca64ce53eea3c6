// LEDGER_COMMIT_INTERVAL_MS (src/ledger/llm-ledger.ts): finished calls wait up to the interval so that one
// transaction commits many of them, but nobody who waits on a commit waits for the interval: a call whose hold needs
// the float grown, a reader of the usage records (drain), shutdown. Run with an interval far longer than any test,
// so that anything committed early was started by someone waiting, not by the timer.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import type { Reservation } from "../../src/ledger/float";
import type { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import { fromFloat, newLlmLedger, usageRecord, useLlmLedgerDatabase } from "../support/llm-ledger";
import type { Finish } from "../../src/llm/records";
import { dialects, skipNote } from "../support/services";

const LONG = 60_000;

for (const d of dialects) {
  skipNote("Postgres", d.available, "the LLM commit interval on Postgres");
  describe.skipIf(!d.available)(`LLM commit interval on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    const batches = useLlmLedgerDatabase(d.name, (t) => ({ db, ledger, accounts } = t));

    const processOf = (intervalMs: number) => {
      const b = newLlmLedger(db, ledger, { floatIdleMs: LONG, commitIntervalMs: intervalMs });
      batches.push(b);
      return b;
    };
    const finish = (b: LlmLedger<Finish>, r: Reservation, charge: number | null = 7) =>
      b.postOrVoid({ hold: r, charge, record: usageRecord(r.accountId, r.id, charge ?? 0) });
    const rid = () => `req_${Bun.randomUUIDv7()}`;
    const linesOf = async (id: string) =>
      Number((await db.get<any>(sql`select count(*) as n from usage_records where account_id = ${id}`))!.n);
    const wallet = async (id: string) => {
      const w = (await db.get<any>(sql`select balance, held from wallets where account_id = ${id}`))!;
      return { balance: Number(w.balance), held: Number(w.held) };
    };
    const usageEntriesOf = async (id: string) =>
      Number(
        (await db.get<any>(sql`select count(*) as n from entries where account_id = ${id} and kind = 'usage'`))!.n,
      );
    const quickly = <T>(p: Promise<T> | T, ms = 1000) =>
      Promise.race([Promise.resolve(p), Bun.sleep(ms).then(() => "still waiting" as const)]);

    test("a call whose hold needs the float grown does not wait for the interval", async () => {
      const a = await accounts.createAccount("interval-grow", 100 * C);
      const b = processOf(LONG);
      const started = performance.now();
      const r = await quickly(b.hold(a.id, C, rid()));
      expect(r).not.toBe("still waiting");
      expect(performance.now() - started).toBeLessThan(1000);
    });

    test("finished calls wait for the interval, then one transaction commits them all", async () => {
      const a = await accounts.createAccount("interval-group", 100 * C);
      const b = processOf(1500);
      const started = performance.now();
      finish(b, await b.hold(a.id, C, rid())); // grows the float at once; this finish waits
      for (let i = 0; i < 20; i++) {
        finish(b, await fromFloat(b, a.id, C, rid())); // fits the float: reserved in memory
        await Bun.sleep(2); // across event-loop turns
      }
      await Bun.sleep(50);
      expect(await linesOf(a.id)).toBe(0); // within the interval: nothing committed yet
      while ((await linesOf(a.id)) < 21 && performance.now() - started < 10_000) await Bun.sleep(20);
      expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
      expect(await linesOf(a.id)).toBe(21);
      expect(await usageEntriesOf(a.id)).toBe(1); // one commit charged them all
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a reader of the records (drain) gets them at once, not after the interval", async () => {
      const a = await accounts.createAccount("interval-drain", 100 * C);
      const b = processOf(LONG);
      finish(b, await b.hold(a.id, C, rid()));
      finish(b, await fromFloat(b, a.id, C, rid()));
      expect(await quickly(b.drain())).not.toBe("still waiting");
      expect(await linesOf(a.id)).toBe(2);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a call that needs the float grown while ends wait takes them along in its commit", async () => {
      const a = await accounts.createAccount("interval-hurry", 100 * C);
      const b = processOf(LONG);
      const first = await b.hold(a.id, C, rid());
      finish(b, first); // waits for the interval
      await Bun.sleep(20);
      // More than the float has free: this call waits on a commit, which starts now and carries the finish too.
      const big = await quickly(b.hold(a.id, 50 * C, rid()));
      if (big === "still waiting") throw new Error("the call waited for the interval");
      expect(await linesOf(a.id)).toBe(1);
      finish(b, big);
      await b.drain();
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a float running low is topped up at the next commit, so the next call need not wait for one", async () => {
      const a = await accounts.createAccount("interval-refill", 1000 * C);
      const b = processOf(10);
      const r1 = await b.hold(a.id, 10 * C, rid()); // a float of 20 C: the call's 10 and as much spare
      await fromFloat(b, a.id, 10 * C, rid()); // the spare room, in memory
      finish(b, r1, C); // its charge comes off the float: 19 C, 9 C free
      await b.drain();
      // Less spare room (9 C) than the calls in flight hold (10 C): the commit topped it up by 10 C.
      expect(b.isFreePath(a.id, 15 * C)).toBe(true);
      expect(await wallet(a.id)).toEqual({ balance: 999 * C, held: 29 * C });
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a top-up takes at most a quarter of what the wallet has beyond the float", async () => {
      const a = await accounts.createAccount("interval-refill-cap", 40 * C);
      const b = processOf(10);
      await b.hold(a.id, 10 * C, rid()); // 10 C and a quarter of the 30 C beyond them as spare: 17.5 C
      const r2 = await fromFloat(b, a.id, 7.5 * C, rid()); // the spare room, in memory
      finish(b, r2, null); // released: 7.5 C free, less than the 10 C in flight
      await b.drain(); // topped up by a quarter of the 22.5 C beyond the float, not by the 10 C in flight
      expect((await wallet(a.id)).held).toBe(17.5 * C + (22.5 * C) / 4);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a full batch of finished calls does not wait for the interval", async () => {
      const a = await accounts.createAccount("interval-full", 100_000 * C);
      const b = processOf(LONG);
      const calls: Reservation[] = [];
      while (calls.length < 512) {
        // MAX_BATCH
        const r = b.hold(a.id, C, rid());
        calls.push(await r);
      }
      for (const r of calls) finish(b, r);
      const started = performance.now();
      while ((await linesOf(a.id)) < 512 && performance.now() - started < 5000) await Bun.sleep(10);
      expect(await linesOf(a.id)).toBe(512);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("shutdown with a call still in flight: its finish is committed when it comes, and the float goes back", async () => {
      const a = await accounts.createAccount("interval-close-busy", 100 * C);
      const b = processOf(LONG);
      const inFlight = await b.hold(a.id, C, rid()); // its float grown; nothing queued
      const closed = b.close(5000); // waits for the call: its float is in use
      await Bun.sleep(50);
      finish(b, inFlight); // the call ends (cut off at the end of the grace period, say)
      expect(await quickly(closed, 3000)).not.toBe("still waiting");
      expect(await linesOf(a.id)).toBe(1);
      expect(await wallet(a.id)).toEqual({ balance: 100 * C - 7, held: 0 });
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("shutting down, a float running low is not topped up: it is on its way back", async () => {
      const a = await accounts.createAccount("interval-close-low", 100 * C);
      const b = processOf(10);
      const r1 = await b.hold(a.id, 10 * C, rid()); // a float of 20 C
      const r2 = await fromFloat(b, a.id, 10 * C, rid()); // no spare room left
      const closed = b.close(5000);
      finish(b, r2, C); // committed at once; the float (19 C, 10 C in flight, 9 C spare) is low
      await Bun.sleep(100);
      const held = async () => (await wallet(a.id)).held;
      expect(await held()).toBe(19 * C);
      finish(b, r1, C);
      await closed;
      expect(await held()).toBe(0);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("shutdown commits what waits for the interval and gives the float back", async () => {
      const a = await accounts.createAccount("interval-close", 100 * C);
      const b = processOf(LONG);
      finish(b, await b.hold(a.id, C, rid()));
      finish(b, await fromFloat(b, a.id, C, rid()));
      expect(await quickly(b.close(5000), 3000)).not.toBe("still waiting");
      expect(await linesOf(a.id)).toBe(2);
      expect(await wallet(a.id)).toEqual({ balance: 100 * C - 14, held: 0 });
      expect(await ledger.check(a.id)).toEqual([]);
    });
  });
}
