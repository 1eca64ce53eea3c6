// A group commit the driver reports failed may have gone through (a connection reset after COMMIT was sent), and one
// that failed may have carried a float's growth or trim: then a float's hold holds more than the process knows. The
// float goes on lending (its size never exceeds its hold), and its hold is set back to its size at a later commit
// (float-plans.ts resyncs); a new float's hold the commit may have made is given back by its id, taken first so that
// a commit still becoming visible on Postgres is waited for. Ledger transactions of one process run one at a time:
// a retried charge beside a growth of the same float deadlocked on Postgres.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db, NamedValues, Step } from "../../src/db/client";
import type { Reservation } from "../../src/ledger/float";
import { HOLD_WALLET, POST_WALLET, type Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { silentLogger } from "../../src/log";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import { fromFloat, newLlmLedger, usageRecord, useLlmLedgerDatabase } from "../support/llm-ledger";
import type { Finish } from "../../src/llm/records";
import { dialects, skipNote } from "../support/services";

for (const d of dialects) {
  skipNote("Postgres", d.available, "LLM commits reported failed on Postgres");
  describe.skipIf(!d.available)(`LLM commits reported failed on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    const batches = useLlmLedgerDatabase(d.name, (t) => ({ db, ledger, accounts } = t));

    /**
     * A process whose next commits can be refused (`down`), reported failed after going through (`ghosts`), made to
     * become visible only later (`late`: on Postgres, COMMIT still under way when the connection dropped), or slowed
     * at chosen statements (`slowAt`, Postgres: to force two transactions to interleave).
     */
    const processOf = (ttlSeconds = 900) => {
      const state = { down: false, ghosts: 0, late: false, slowAt: null as null | ((step: Step) => Step[]) };
      const errors: string[] = [];
      const flaky = {
        ...db,
        tx: (async (body) => {
          if (state.down) throw new Error("connection reset");
          if (state.late) {
            state.late = false;
            void db
              .tx(function* (q) {
                const r = yield* body(q);
                yield* q.run(sql`select pg_sleep(0.3)`);
                return r;
              })
              .catch(() => {});
            await Bun.sleep(100);
            throw new Error("connection reset after COMMIT was sent");
          }
          const slowAt = state.slowAt;
          const r = await db.tx(slowAt ? (q) => slowed(body(q), slowAt) : body);
          if (state.ghosts > 0 && state.ghosts--) throw new Error("connection reset after COMMIT was sent");
          return r;
        }) as Db["tx"],
      };
      const log = { ...silentLogger, error: (msg: string, f: any) => void errors.push(`${msg}: ${f?.error ?? ""}`) };
      const b = newLlmLedger(flaky, ledger, { holdTtlMs: ttlSeconds * 1000 }, log);
      batches.push(b);
      return { b, state, errors };
    };
    function* slowed(it: Generator<Step, any, any>, extra: (step: Step) => Step[]): Generator<Step, any, any> {
      let r = it.next();
      while (!r.done) {
        const [before = [], after = []] = [
          extra(r.value).filter((s) => (s.values as NamedValues | undefined)?.when === "before"),
          extra(r.value).filter((s) => (s.values as NamedValues | undefined)?.when !== "before"),
        ];
        for (const s of before) yield { ...s, values: undefined };
        const res = yield r.value;
        for (const s of after) yield { ...s, values: undefined };
        r = it.next(res);
      }
      return r.value;
    }
    const rid = () => `req_${Bun.randomUUIDv7()}`;
    const charge = (b: LlmLedger<Finish>, r: Reservation, cost: number | null) =>
      b.postOrVoid({ hold: r, charge: cost, record: usageRecord(r.accountId, r.id, cost ?? 0) });
    const pendingHolds = async (id: string) =>
      (await db.all<any>(sql`select id, amount from holds where account_id = ${id} and status = 'pending'`)).map(
        (h) => ({ id: h.id as string, amount: Number(h.amount) }),
      );
    const wallet = async (id: string) => {
      const w = (await db.get<any>(sql`select balance, held from wallets where account_id = ${id}`))!;
      return { balance: Number(w.balance), held: Number(w.held), available: Number(w.balance) - Number(w.held) };
    };
    const until = async (cond: () => Promise<boolean>, ms: number) => {
      const end = Date.now() + ms;
      while (!(await cond()) && Date.now() < end) await Bun.sleep(20);
    };

    test("a new float made by a commit reported failed is given back, not left held until it expires", async () => {
      const a = await accounts.createAccount("ghost-new-float", 100 * C);
      const { b, state } = processOf();
      state.ghosts = 1; // the commit that creates the float goes through, and the driver reports an error
      const refused = await b.hold(a.id, 5 * C, rid()).catch((e) => e);
      expect(refused.code).toBe("ledger_unavailable"); // the call was told to retry; it was not served
      await until(async () => (await wallet(a.id)).held === 0, 3000);
      expect(await pendingHolds(a.id)).toEqual([]);
      expect(await wallet(a.id)).toEqual({ balance: 100 * C, held: 0, available: 100 * C });
      const r = await b.hold(a.id, 5 * C, rid()); // the wallet serves its next call as ever
      charge(b, r, 1000);
      await b.close(1000);
      expect((await wallet(a.id)).available).toBe(100 * C - 1000);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a float grown unseen goes on lending, and its hold is set back to what the process knows at the next commit", async () => {
      const a = await accounts.createAccount("ghost-grown-float", 100 * C);
      const { b, state } = processOf();
      const first = await b.hold(a.id, 5 * C, rid()); // a float of 10 C
      const [old] = await pendingHolds(a.id);
      state.ghosts = 1; // the growth for the next call goes through, and the driver reports an error
      const refused = await b.hold(a.id, 30 * C, rid()).catch((e) => e);
      expect(refused.code).toBe("ledger_unavailable");
      expect((await pendingHolds(a.id))[0]!.amount).toBeGreaterThan(old!.amount); // held, unknown to the process
      const next = await fromFloat(b, a.id, C, rid()); // lent from the same float, in memory
      charge(b, first, 1000);
      await b.drain();
      expect(await pendingHolds(a.id)).toEqual([{ id: old!.id, amount: 10 * C - 1000 }]);
      expect((await wallet(a.id)).held).toBe(10 * C - 1000);
      expect(await ledger.check(a.id)).toEqual([]);
      charge(b, next, 500);
      await b.close(1000);
      expect(await wallet(a.id)).toEqual({ balance: 100 * C - 1500, held: 0, available: 100 * C - 1500 });
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("after a refused commit, a call the wallet covers is served while a long call of the float runs", async () => {
      const a = await accounts.createAccount("refused-then-served", 10 * C);
      const { b, state } = processOf();
      const long = await b.hold(a.id, 2 * C, rid()); // a float of 4 C; a long stream
      state.down = true;
      expect((await b.hold(a.id, 5 * C, rid()).catch((e) => e)).code).toBe("ledger_unavailable");
      state.down = false;
      const next = await b.hold(a.id, 7 * C, rid()); // 8 C are free
      charge(b, next, 7 * C);
      charge(b, long, null);
      await b.close(1000);
      expect(await wallet(a.id)).toEqual({ balance: 3 * C, held: 0, available: 3 * C });
      expect(await ledger.check(a.id)).toEqual([]);
    });

    test("a float whose growth was refused keeps its expiry ahead while its call runs: never swept and lent twice", async () => {
      const a = await accounts.createAccount("refused-expiry", 10 * C);
      // A float in use is refreshed every third of its TTL: the wait spans several refreshes, with room for a busy
      // machine's late timers (a 0.3 s TTL was seen swept under load).
      const { b, state } = processOf(1);
      const inFlight = await b.hold(a.id, 2 * C, rid());
      state.ghosts = 1;
      expect((await b.hold(a.id, 5 * C, rid()).catch((e) => e)).code).toBe("ledger_unavailable");
      await Bun.sleep(2300);
      expect(await ledger.sweepExpired(Date.now(), ["float"])).toBe(0);
      const w = await wallet(a.id);
      if (w.available > 0) await ledger.hold(a.id, w.available, "task", null, 900_000); // someone takes what shows available
      charge(b, inFlight, 2 * C);
      await b.drain();
      expect((await wallet(a.id)).available).toBeGreaterThanOrEqual(0);
      expect(await ledger.check(a.id)).toEqual([]);
    });

    // Postgres only: SQLite has no COMMIT that becomes visible later, nor two transactions of one process at once.
    if (d.name === "pg") {
      test("Postgres: a new float whose commit becomes visible after the void is still given back", async () => {
        const a = await accounts.createAccount("late-ghost", 100 * C);
        const { b, state } = processOf();
        state.late = true;
        expect((await b.hold(a.id, 5 * C, rid()).catch((e) => e)).code).toBe("ledger_unavailable");
        await Bun.sleep(800);
        expect(await pendingHolds(a.id)).toEqual([]);
        expect((await wallet(a.id)).held).toBe(0);
      });

      test("Postgres: a charge retried while the group commit grows its float: no deadlock, the waiting call is served", async () => {
        const a = await accounts.createAccount("retry-deadlock", 100 * C);
        const { b, state, errors } = processOf();
        const r1 = await b.hold(a.id, 2 * C, rid());
        state.down = true;
        charge(b, r1, C);
        await b.drain(); // r1's charge waits for a retry
        state.down = false;
        // Pauses that make the two transactions interleave: the retried charge locks the float, then waits before the
        // wallet; the growth locks the wallet, then waits before the float.
        const pause = (s: number, when?: string): Step => ({
          sql: sql.raw(`select pg_sleep(${s})`),
          mode: "run",
          values: when ? { when } : undefined,
        });
        state.slowAt = (step) =>
          step.sql === POST_WALLET ? [pause(0.4, "before")] : step.sql === HOLD_WALLET ? [pause(0.1)] : [];
        await Bun.sleep(150);
        const retry = (b as any).retries.runDue() as Promise<void>; // what the float maintenance starts
        const [, served] = await Promise.all([retry, b.hold(a.id, 10 * C, rid())]);
        state.slowAt = null;
        expect(errors.filter((e) => e.includes("deadlock"))).toEqual([]);
        charge(b, served, null);
        await b.close(2000);
        expect(await ledger.check(a.id)).toEqual([]);
      }, 15_000);
    }
  });
}
