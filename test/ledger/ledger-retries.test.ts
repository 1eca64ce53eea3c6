// A group commit the database refuses (src/ledger/write-retries.ts): the finished calls in it are still charged, once,
// when the database takes them again; one that committed although the driver reported an error is not charged twice;
// what is still refused at shutdown is logged, call by call, for the operator.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import type { Reservation } from "../../src/ledger/float";
import type { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { silentLogger } from "../../src/log";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import { fromFloat, newLlmLedger, usageRecord } from "../support/llm-ledger";
import type { Finish } from "../../src/llm/records";
import { dialects, skipNote, useLedgerDatabase } from "../support/services";

// These tests wait out retry backoffs and shutdown deadlines (seconds on a busy machine); the preload's
// setDefaultTimeout reaches only the first file of a full run (oven-sh/bun#43787), so the file sets it again.
setDefaultTimeout(30_000);

for (const d of dialects) {
  skipNote("Postgres", d.available, "LLM ledger retries on Postgres");
  describe.skipIf(!d.available)(`LLM ledger retries on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    useLedgerDatabase(d.name, (t) => ({ db, ledger, accounts } = t));

    /** A process whose database can be taken down (every commit refused) or made to report commits as failed. */
    const processOf = () => {
      const state = { down: false, ghosts: 0, latencyMs: 0, afterCommit: async () => {} };
      const logged: Array<{ msg: string; fields: any }> = [];
      const flaky = {
        ...db,
        tx: (async (body) => {
          if (state.down) throw new Error("connection reset");
          if (state.latencyMs) await Bun.sleep(state.latencyMs);
          const r = await db.tx(body);
          await state.afterCommit();
          if (state.ghosts > 0 && state.ghosts--) throw new Error("connection reset after COMMIT was sent");
          return r;
        }) as Db["tx"],
      };
      const log = { ...silentLogger, error: (msg: string, fields: any) => void logged.push({ msg, fields }) };
      return { b: newLlmLedger(flaky, ledger, {}, log), state, logged };
    };
    const rid = () => `req_${Bun.randomUUIDv7()}`;
    const charge = (b: LlmLedger<Finish>, r: Reservation, cost: number) =>
      b.postOrVoid({ hold: r, charge: cost, record: usageRecord(r.accountId, r.id, cost) });
    const lines = async (id: string) =>
      Number((await db.get<any>(sql`select count(*) as n from usage_records where account_id = ${id}`))!.n);
    const balance = async (id: string) =>
      Number((await db.get<any>(sql`select balance from wallets where account_id = ${id}`))!.balance);
    const until = async (cond: () => Promise<boolean>, ms: number) => {
      const end = Date.now() + ms;
      while (!(await cond()) && Date.now() < end) await Bun.sleep(20);
    };

    test("calls finished while the database refused commits are charged once it takes them again", async () => {
      const a = await accounts.createAccount("retry-down", 100 * C);
      const { b, state, logged } = processOf();
      const calls = [await b.hold(a.id, 5 * C, rid())]; // a float of 10 C
      for (let i = 0; i < 4; i++) calls.push(await fromFloat(b, a.id, C, rid())); // from its spare room, in memory
      state.down = true;
      for (const r of calls) charge(b, r, 1000);
      await b.drain(); // the group commit fails, and each call's piece on its own
      expect(await lines(a.id)).toBe(0);
      expect(logged.map((l) => l.msg)).toContain("llm ledger write failed");
      state.down = false;
      await until(async () => (await lines(a.id)) === 5, 5000);
      expect(await lines(a.id)).toBe(5);
      expect(await balance(a.id)).toBe(100 * C - 5000);
      expect(await ledger.check(a.id)).toEqual([]);
      expect(logged.map((l) => l.msg)).not.toContain("llm ledger write abandoned");
      await b.close(1000);
    });

    test("a commit reported failed although it went through is not charged twice", async () => {
      const a = await accounts.createAccount("retry-ghost", 100 * C);
      const { b, state, logged } = processOf();
      const first = await b.hold(a.id, C, rid());
      const second = await fromFloat(b, a.id, C, rid());
      state.ghosts = 1; // the next commit goes through, and the driver reports an error
      charge(b, first, 1000);
      charge(b, second, 2000);
      await b.drain();
      await Bun.sleep(300); // any retry would have run by now
      expect(await lines(a.id)).toBe(2);
      expect(await balance(a.id)).toBe(100 * C - 3000);
      expect(await ledger.check(a.id)).toEqual([]);
      // Each call's line was found already written: done, not a failure to retry.
      expect(logged.map((l) => l.msg).filter((m) => m.startsWith("llm ledger write"))).toEqual([]);
      await b.close(1000);
    });

    const available = async (id: string) => {
      const w = (await db.get<any>(sql`select balance, held from wallets where account_id = ${id}`))!;
      return Number(w.balance) - Number(w.held);
    };

    test("a float whose charge waits for a retry does not go back before it is written (its hold covers it)", async () => {
      const a = await accounts.createAccount("retry-release", 10 * C);
      const { b, state } = processOf();
      const r = await b.hold(a.id, 8 * C, rid()); // a float of 8.5 C
      state.down = true;
      charge(b, r, 8 * C);
      await b.drain(); // refused: queued for a retry
      // A media task wanting the float back while the database still refuses: not yet, its call's charge is
      // unwritten (returnIdle waits a moment for the retry, in vain).
      expect(await b.returnIdle(a.id)).toBe(false);
      expect(await available(a.id)).toBe(1.5 * C); // not 10 C: the float still holds the 8 C spent
      state.down = false;
      // Once the database takes it again, the float goes back: the charge first (returnIdle waits for its retry).
      expect(await b.returnIdle(a.id)).toBe(true);
      expect(await lines(a.id)).toBe(1);
      expect(await available(a.id)).toBe(2 * C);
      expect(await ledger.check(a.id)).toEqual([]);
      await b.close(1000);
    });

    test("a float goes back only after every charge of its calls queued before, even past one batch", async () => {
      const a = await accounts.createAccount("retry-split", 100 * C);
      const { b, state } = processOf();
      const first = await b.hold(a.id, 30 * C, rid()); // a float of 47.5 C
      const calls = [first];
      for (let i = 0; i < 599; i++) calls.push(await fromFloat(b, a.id, 0.02 * C, rid()));
      const seen: number[] = [];
      state.afterCommit = async () => void seen.push(await available(a.id));
      for (const r of calls) charge(b, r, 0.01 * C); // 600 finishes: more than one batch (512)
      expect(await b.returnIdle(a.id, 10_000)).toBe(true); // bounded by what the database takes, not a 250 ms wait
      state.afterCommit = async () => {};
      const truth = 100 * C - 600 * 0.01 * C;
      expect(await available(a.id)).toBe(truth);
      expect(Math.max(...seen)).toBeLessThanOrEqual(truth); // never more available than the wallet has
      expect(await ledger.check(a.id)).toEqual([]);
      await b.close(1000);
    });

    test("shutdown waits for a retry pass under way: the charges it writes are in when close() returns", async () => {
      const a = await accounts.createAccount("retry-close-pass", 100 * C);
      const { b, state } = processOf();
      const calls = [await b.hold(a.id, 5 * C, rid())];
      for (let i = 0; i < 4; i++) calls.push(await fromFloat(b, a.id, C, rid()));
      state.down = true;
      for (const r of calls) charge(b, r, 1000);
      await b.drain();
      state.down = false;
      state.latencyMs = 150; // the database is back, slowly: a retry pass will be under way when close() is called
      await Bun.sleep(350);
      await b.close(5000);
      expect(await lines(a.id)).toBe(5);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("shutdown with the database still refusing: what is given up is logged before server.ts's close deadline", async () => {
      const a = await accounts.createAccount("retry-close-deadline", 100 * C);
      const { b, state, logged } = processOf();
      const r = await b.hold(a.id, C, rid());
      state.down = true;
      charge(b, r, 1234);
      const closing = b.close(4000);
      // server.ts gives closing the services as long as the ledger's own deadline: the log must come within it.
      const inTime = await Promise.race([closing.then(() => true), Bun.sleep(4000).then(() => false)]);
      expect(inTime).toBe(true);
      expect(logged.map((l) => l.msg)).toContain("llm ledger write abandoned at shutdown");
      state.down = false;
    }, 15_000);

    /** An account whose one call (1 C reserved, charged 1234 µcr) the database refused: its charge waits for a retry. */
    const refusedCharge = async (name: string) => {
      const a = await accounts.createAccount(name, 100 * C);
      const p = processOf();
      const r = await p.b.hold(a.id, C, rid());
      p.state.down = true;
      charge(p.b, r, 1234);
      await p.b.drain(); // refused: retried at +0.1, +0.3, +0.7, +1.5, then +3.1 s
      return { a, ...p };
    };

    test("shutdown: a charge the database takes again shortly before the deadline is written by the last attempt", async () => {
      const { a, b, state } = await refusedCharge("retry-close-last");
      setTimeout(() => (state.down = false), 1800);
      await b.close(2800);
      expect(await lines(a.id)).toBe(1);
      expect(await balance(a.id)).toBe(100 * C - 1234);
      expect(await ledger.check(a.id)).toEqual([]);
    }, 15_000);

    // The wait's bound (250 ms for readers) is what readers are given; the retry's commit takes what the database
    // takes, which on a busy machine is more: the wait and its bound are tested apart.
    test("a reader of the account waits for its charge the database refused a moment ago, until the retry writes it", async () => {
      const { a, b, state } = await refusedCharge("retry-settled");
      state.down = false;
      const started = performance.now();
      await b.committedFor(a.id, 10_000); // the first retry comes 100 ms after the refusal
      expect(await lines(a.id)).toBe(1);
      expect(performance.now() - started).toBeLessThan(10_000); // it ended with the write, not at its bound
      await b.close(1000);
    });

    test("while the database still refuses that charge, the reader gives up after 250 ms", async () => {
      const { a, b, state } = await refusedCharge("retry-settled-down");
      const started = performance.now();
      await b.committedFor(a.id);
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(200); // it did wait, through the first retry at 100 ms
      expect(waited).toBeLessThan(2000); // and not for the later ones (at 300 ms, 700 ms, 1.5 s…), nor for ever
      expect(await lines(a.id)).toBe(0);
      state.down = false;
      await b.close(1000);
    });

    test("returnIdle answers true only once the float's void is committed (a refused void waits for a retry)", async () => {
      const a = await accounts.createAccount("retry-return-idle", 10 * C);
      const { b, state } = processOf();
      const r = await b.hold(a.id, 8 * C, rid());
      charge(b, r, 1000);
      await b.drain(); // written; the float is idle
      const before = await available(a.id);
      state.down = true; // the release's commit, and its attempt on its own, are refused
      expect(await b.returnIdle(a.id)).toBe(false);
      expect(await available(a.id)).toBe(before);
      state.down = false;
      await until(async () => (await available(a.id)) > before, 3000); // the retry gives it back
      expect(await available(a.id)).toBe(10 * C - 1000);
      expect(await ledger.check(a.id)).toEqual([]);
      await b.close(1000);
    });

    test("what the database still refuses at shutdown is logged call by call", async () => {
      const a = await accounts.createAccount("retry-abandon", 100 * C);
      const { b, state, logged } = processOf();
      const r = await b.hold(a.id, C, rid());
      state.down = true;
      charge(b, r, 1234);
      await b.close(500);
      const abandoned = logged.filter((l) => l.msg === "llm ledger write abandoned at shutdown").map((l) => l.fields);
      expect(abandoned).toContainEqual({
        request_id: r.id,
        account_id: a.id,
        charge: 1234,
        held: C,
        attempts: expect.any(Number),
      });
      state.down = false;
    });
  });
}
