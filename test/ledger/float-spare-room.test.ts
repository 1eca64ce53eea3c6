// The LLM float's spare room, on SQLite and Postgres: a float grown for a burst gives back what it no longer uses,
// and a process short on a small wallet gets another process's spare room back (also a crashed or busy one's, and
// beside a media task's hold), so a wallet is refused only for what it truly lacks.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import { withIdleFloatBack } from "../../src/ledger/float";
import type { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { fromFloat } from "../support/llm-ledger";
import { dialects, skipNote } from "../support/services";
import { useLlmFloat } from "../support/llm-float";

for (const d of dialects) {
  skipNote("Postgres", d.available, "the LLM float on Postgres");
  describe.skipIf(!d.available)(`LLM float on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    const { processOf, rid, finish, wallet, holdsOf } = useLlmFloat(d.name, (t) => ({ db, ledger, accounts } = t));

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
  });
}
