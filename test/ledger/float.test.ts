// The LLM path's float (src/ledger/float.ts, driven by src/ledger/llm-ledger.ts), on SQLite and Postgres: calls
// reserve from a durable per-process hold in memory, and the ledger's guarantees still hold at every commit:
// no overspend (also across two processes on one database), each call settled once with its own line (its usage
// record: held, cost, and the usage entry of its batch), the books balancing (Ledger.check, which also sums every
// usage entry's lines), the float going back when idle, and a crashed process's float swept after its expiry.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import { withIdleFloatBack, type Reservation } from "../../src/ledger/float";
import { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { silentLogger } from "../../src/log";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import { fromFloat, newLlmLedger } from "../support/llm-ledger";
import type { Finish, UsageRecord } from "../../src/llm/records";
import { closeBatches, dialects, skipNote, useLedgerDatabase } from "../support/services";

for (const d of dialects) {
  skipNote("Postgres", d.available, "the LLM float on Postgres");
  describe.skipIf(!d.available)(`LLM float on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    const batches: LlmLedger<Finish>[] = [];
    useLedgerDatabase(
      d.name,
      (t) => ({ db, ledger, accounts } = t),
      () => closeBatches(batches),
    );

    /** A gateway process's LLM ledger (ttl in seconds). */
    const processOf = (opts: { ttlSeconds?: number; idleMs?: number; db?: Db } = {}) => {
      const b = newLlmLedger(opts.db ?? db, ledger, {
        holdTtlMs: (opts.ttlSeconds ?? 900) * 1000,
        floatIdleMs: opts.idleMs ?? 30,
      });
      batches.push(b);
      return b;
    };
    /** A request id of its own for each call: the reservation's id, which keys the call's usage record. */
    const rid = (label: string) => `req_${label}_${Bun.randomUUIDv7()}`;
    const record = (accountId: string, cost: number, requestId: string): UsageRecord => ({
      requestId,
      accountId,
      keyId: "key_t",
      model: "m",
      endpoint: "/v1/chat/completions",
      provider: "openai",
      status: "ok",
      upstreamStatus: 200,
      usage: null,
      cost,
      latencyMs: 1,
      ttfbMs: 1,
      error: null,
    });
    const finish = (b: LlmLedger<Finish>, r: Reservation, charge: number | null) =>
      b.postOrVoid({ hold: r, charge, record: record(r.accountId, charge ?? 0, r.id) });
    const wallet = async (id: string) => {
      const w = (await db.get<any>(sql`select balance, held from wallets where account_id = ${id}`))!;
      return { balance: Number(w.balance), held: Number(w.held) };
    };
    const holdsOf = async (id: string, kind: string) =>
      (
        await db.all<any>(
          sql`select id, amount, status, settled from holds where account_id = ${id} and kind = ${kind} order by created_at, id`,
        )
      ).map((h) => ({
        id: h.id,
        amount: Number(h.amount),
        status: h.status,
        settled: h.settled === null ? null : Number(h.settled),
      }));
    /** The calls' lines: their usage records, with what each reserved and was charged and the entry charging it. */
    const linesOf = async (id: string) =>
      (
        await db.all<any>(
          sql`select id, held, cost, entry_id from usage_records where account_id = ${id} order by created_at, id`,
        )
      ).map((l) => ({
        id: l.id,
        held: Number(l.held),
        cost: Number(l.cost),
        entry: l.entry_id,
      }));
    const usageEntriesOf = async (id: string) =>
      (
        await db.all<any>(
          sql`select id, amount from entries where account_id = ${id} and kind = 'usage' order by created_at, id`,
        )
      ).map((e) => ({ id: e.id, amount: Number(e.amount) }));
    const idle = async (id: string) => {
      for (let i = 0; i < 200 && (await wallet(id)).held !== 0; i++) await Bun.sleep(10);
    };

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

    test("a float grown for a burst gives back what it no longer uses, so another process can serve a small wallet", async () => {
      const a = await accounts.createAccount("float-trim", 20 * C);
      const one = processOf({ idleMs: 60_000 });
      const other = processOf({ idleMs: 60_000 });
      const H = 3.65 * C;
      // A burst of five calls on one process: its float is grown for all of them (18.25 C, and a quarter of the
      // 1.75 C beyond as spare).
      const burst = await Promise.all(Array.from({ length: 5 }, (_, i) => one.hold(a.id, H, rid(`burst${i}`))));
      for (const r of burst) finish(one, r, 0.6 * C);
      // Then one call at a time there: the float keeps ~15.7 C, of which 12 C spare.
      const serveOne = async (label: string) => {
        const r = one.hold(a.id, H, rid(label));
        finish(one, await r, 0.1 * C);
        await one.drain();
      };
      const inFlight = await fromFloat(one, a.id, H, rid("long")); // a long call, in flight throughout
      await serveOne("s1"); // this commit reads what the wallet has (1.1 C beside the float)
      await serveOne("s2"); // this one trims the float back to twice the call in flight, with no one asking
      const w = await wallet(a.id);
      expect(w.held).toBe(2 * H);
      const served = await other.hold(a.id, H, rid("o2")); // the other process can serve the wallet now
      finish(other, served, 0.1 * C);
      finish(one, inFlight, 0.1 * C);
      await one.drain();
      await other.drain();
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a process short on a small wallet gets another's spare room back: served, and refused only for what the wallet truly lacks", async () => {
      const a = await accounts.createAccount("float-ask", 10 * C);
      const one = processOf({ idleMs: 60_000 });
      const other = processOf({ idleMs: 60_000 });
      const r1 = await one.hold(a.id, 3 * C, rid("one1")); // its float: the call's 3 C and a quarter of the 7 C beyond
      expect((await wallet(a.id)).held).toBe(3 * C + 1.75 * C);
      // 6 C: more than the 5.25 C the wallet has beside that float, less than the 7 C it has beside the call in flight.
      const r2 = await other.hold(a.id, 6 * C, rid("other1"));
      // Neither keeps spare room on this wallet now: what is held is the two calls in flight.
      expect((await wallet(a.id)).held).toBe(9 * C);
      // 2 C more than the wallet has beside the calls in flight (1 C): refused on either process, stating that 1 C.
      for (const b of [other, one]) {
        await expect(b.hold(a.id, 2 * C, rid("x"))).rejects.toMatchObject({
          status: 402,
          message: expect.stringContaining("needs up to 2 credits and 1 are available"),
        });
      }
      // A call that ends gives its whole reservation back at its commit, for the other process to use.
      finish(one, r1, C / 2);
      await one.drain();
      expect(await wallet(a.id)).toEqual({ balance: 9.5 * C, held: 6 * C });
      const r3 = await other.hold(a.id, 3.5 * C, rid("other2"));
      finish(other, r2, C);
      finish(other, r3, C);
      await other.drain();
      expect(await wallet(a.id)).toEqual({ balance: 7.5 * C, held: 0 });
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a float that never answers (its process crashed) is waited for a bounded time, then left out of the refusal", async () => {
      const a = await accounts.createAccount("float-ask-crash", 10 * C);
      const crashed = processOf({ idleMs: 60_000 });
      await crashed.hold(a.id, 3 * C, rid("c1")); // its float: 4.75 C
      (crashed as any).shortfalls.stop(); // the process is gone: nothing looks for asks on its float
      const live = processOf({ idleMs: 60_000 });
      await expect(live.hold(a.id, 6 * C, rid("l1"))).rejects.toMatchObject({
        status: 402,
        message: expect.stringContaining("needs up to 6 credits and 5.25 are available"),
      });
      expect(await holdsOf(a.id, "float")).toMatchObject([{ amount: 4.75 * C, status: "pending" }]);
      // Once it has been waited for, later calls (and other features' holds) on the wallet are not held up by it.
      const started = performance.now();
      await expect(live.hold(a.id, 6 * C, rid("l2"))).rejects.toMatchObject({ status: 402 });
      expect(await live.returnIdle(a.id)).toBe(false);
      expect(performance.now() - started).toBeLessThan(500);
    });

    test("a float asked while its own process grows it for a call gives its spare room back all the same", async () => {
      const a = await accounts.createAccount("float-ask-growing", 10 * C);
      const asked = processOf({ idleMs: 60_000 });
      const asker = processOf({ idleMs: 60_000 });
      await asked.hold(a.id, 3 * C, rid("g1")); // in flight throughout; its float: the call's 3 C and 1.75 C spare
      (asked as any).shortfalls.stop(); // the test says when it finds the ask
      // 6 C: the 5.25 C the wallet has beside that float fall short; with the 1.75 C spare room, 7 C do not.
      const served = asker.hold(a.id, 6 * C, rid("g2"));
      served.catch(() => {}); // awaited below
      for (
        let i = 0;
        i < 200 &&
        !(await db.get<any>(sql`select 1 as one from holds where account_id = ${a.id} and asked_at is not null`));
        i++
      )
        await Bun.sleep(5);
      // It finds the ask as a call of its own (8 C: more than the wallet and its float can cover) waits for growth:
      // both go into one commit.
      (asked as any).book.asked([(asked as any).book.floats.get(a.id)]);
      (asked as any).asks.makeLean(a.id);
      const refused = asked.hold(a.id, 8 * C, rid("g3"));
      // Refused (the 7 C it could have are short of 8 C), before or after the asker takes its 6 C of them.
      await expect(refused).rejects.toMatchObject({
        status: 402,
        message: expect.stringContaining("needs up to 8 credits"),
      });
      expect((await served).amount).toBe(6 * C);
      expect(await wallet(a.id)).toEqual({ balance: 10 * C, held: 9 * C });
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a float whose trim a failed commit left unsure answers an ask only once its hold is set back (its charges written first)", async () => {
      const a = await accounts.createAccount("float-ask-unsure", 10 * C);
      // The asked process's database: refuses every transaction while `failing`, but for `passes` of them.
      let failing = false;
      let passes = 0;
      const flaky = Object.create(db) as Db;
      flaky.tx = (body) => {
        if (failing && passes-- <= 0) return Promise.reject(new Error("connection reset"));
        return db.tx(body);
      };
      const asked = processOf({ idleMs: 60_000, db: flaky });
      const asker = processOf({ idleMs: 60_000 });
      (asked as any).shortfalls.stop(); // the test says when it looks for asks
      const answerNow = async () => {
        (asked as any).shortfalls.pollAsks();
        while ((asked as any).shortfalls.polling) await Bun.sleep(2);
        await asked.drain();
      };
      const r1 = await asked.hold(a.id, 3 * C, rid("u1")); // its float: 4.75 C
      failing = true;
      finish(asked, r1, C); // its charge is refused, and waits for a retry
      await asked.drain();
      const served = asker.hold(a.id, 6 * C, rid("u2")); // 5.25 C beside the float fall short
      let settled = false;
      served.catch(() => {}).finally(() => (settled = true)); // awaited below
      for (
        let i = 0;
        i < 200 &&
        !(await db.get<any>(sql`select 1 as one from holds where account_id = ${a.id} and asked_at is not null`));
        i++
      )
        await Bun.sleep(5);
      await answerNow(); // its trim is in a commit that fails: the float is smaller than its hold now
      passes = 1;
      await answerNow(); // a commit that goes through while the charge still waits: the hold still holds the trim
      const seen = (asker as any).commits.commitsEnded; // the asker tries again meanwhile (twice, to be sure it looked after that commit)
      while (!settled && (asker as any).commits.commitsEnded < seen + 2) await Bun.sleep(2);
      failing = false;
      await (asked as any).retries.runDue(true);
      await answerNow();
      expect((await served).amount).toBe(6 * C);
      expect(await wallet(a.id)).toEqual({ balance: 9 * C, held: 6 * C });
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a media task's hold that does not fit beside another process's idle float gets its spare room back", async () => {
      const a = await accounts.createAccount("float-ask-task", 10 * C);
      const one = processOf({ idleMs: 60_000 });
      const other = processOf({ idleMs: 60_000 });
      const r = await one.hold(a.id, 3 * C, rid("t1")); // its float: 4.75 C
      finish(one, r, C);
      await one.drain(); // idle now, holding 3.75 C for the next calls: the wallet shows 5.25 C available
      const task = await withIdleFloatBack({ llmLedger: other }, a.id, "insufficient_credits", () =>
        ledger.hold(a.id, 8 * C, "task", null, 60_000),
      );
      expect(task.amount).toBe(8 * C);
      expect(await wallet(a.id)).toEqual({ balance: 9 * C, held: 8 * C });
      // One that does not fit even then is still refused, stating what the wallet has beside the task.
      await expect(
        withIdleFloatBack({ llmLedger: other }, a.id, "insufficient_credits", () =>
          ledger.hold(a.id, 2 * C, "task", null, 60_000),
        ),
      ).rejects.toMatchObject({
        status: 402,
        message: expect.stringContaining("needs up to 2 credits and 1 are available"),
      });
      await ledger.void(task.id);
      expect(await ledger.check(a.id)).toEqual([]);
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
