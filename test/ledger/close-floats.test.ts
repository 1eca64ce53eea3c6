// close() gives every float back, including one whose void is not yet written when it is called (found by the LLM
// ledger fuzz: a float hold left pending, amount 0, after both processes had closed). Two such moments, each driven
// here by explicit steps: a float retired as idle whose void waits for a commit still waiting out its interval, and
// a pass of retried voids under way, with a void it has taken but not yet attempted.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import { LlmLedger } from "../../src/ledger/llm-ledger";
import type { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { insertRecordsIn, type Finish } from "../../src/llm/records";
import { silentLogger } from "../../src/log";
import { usageRecord } from "../support/llm-ledger";
import { dialects, skipNote, useLedgerDatabase } from "../support/services";

/** A process's LLM ledger on a clock the test moves (floats go idle when it says), over `db`. */
function processOn(db: Db, ledger: Ledger, commitIntervalMs: number) {
  let now = Date.now();
  const b = new LlmLedger<Finish>({
    db,
    ledger,
    log: silentLogger,
    settings: { holdTtlMs: 900_000, floatIdleMs: 10, commitIntervalMs },
    writeLines: insertRecordsIn,
    clock: () => now,
  });
  return { b, later: () => void (now += 60_000) };
}

/** A float for the wallet, grown for one call that is then charged and written. */
async function floatFor(b: LlmLedger<Finish>, accountId: string, ref: string) {
  const r = await b.hold(accountId, C, ref);
  b.postOrVoid({ hold: r, charge: C / 2, record: usageRecord(accountId, ref, C / 2) });
  await b.drain();
}

/** Until `done()`, looking every few ms (each step waits on the ledger's own timers, at most 5 s). */
async function until(done: () => boolean) {
  for (let i = 0; i < 500 && !done(); i++) await Bun.sleep(10);
  expect(done()).toBe(true);
}

const pendingOf = (db: Db, accountId: string) =>
  db.all(sql`select id, amount from holds where account_id = ${accountId} and status = 'pending'`);

for (const d of dialects) {
  skipNote("Postgres", d.available, "close() giving back floats on Postgres");
  describe.skipIf(!d.available)(`close() gives back floats whose void is not yet written, on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    useLedgerDatabase(d.name, (t) => ({ db, ledger, accounts } = t));

    test("a float retired as idle while the commit that voids it waits out its interval", async () => {
      const a = await accounts.createAccount("close-idle-void", 50 * C);
      const { b, later } = processOn(db, ledger, 60_000); // the void's commit waits a minute unless someone waits
      await floatFor(b, a.id, "req_close_idle");
      later();
      await until(() => !b.isFreePath(a.id, 1)); // retired: its void is queued for the next commit
      await b.close(2000);
      expect({ pending: await pendingOf(db, a.id), held: (await ledger.balance(a.id))!.held }).toEqual({
        pending: [],
        held: 0,
      });
    });

    test("a retried void taken by a pass under way, not yet attempted", async () => {
      const a1 = await accounts.createAccount("close-pass-1", 50 * C);
      const a2 = await accounts.createAccount("close-pass-2", 50 * C);
      let down = false;
      let gate: Promise<void> | null = null;
      let gated = false;
      const flaky: Db = {
        ...db,
        tx: (async (body) => {
          if (down) throw new Error("connection reset");
          if (gate) {
            gated = true;
            await gate;
          }
          return db.tx(body);
        }) as Db["tx"],
      };
      const { b, later } = processOn(flaky, ledger, 2);
      await floatFor(b, a1.id, "req_close_pass_1");
      await floatFor(b, a2.id, "req_close_pass_2");
      // Both go idle; the commit voiding them is refused, so each void is queued for a retry.
      down = true;
      later();
      await until(() => (b as any).retries.pending === 2);
      down = false;
      let open = () => {};
      gate = new Promise<void>((resolve) => (open = resolve));
      // The retries' pass takes both voids and attempts the first, which waits on the database.
      await until(() => gated);
      const closing = b.close(2000);
      gate = null;
      open();
      await closing;
      expect({ pending1: await pendingOf(db, a1.id), pending2: await pendingOf(db, a2.id) }).toEqual({
        pending1: [],
        pending2: [],
      });
    });
  });
}
