// A group commit changes the floats in memory only once its transaction has committed (src/ledger/llm-ledger.ts,
// float-writes.ts): a transaction rolled back after its statements ran must leave every float as it was.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import type { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { newLlmLedger, usageRecord } from "../support/llm-ledger";
import { dialects, skipNote, useLedgerDatabase } from "../support/services";

for (const d of dialects) {
  skipNote("Postgres", d.available, "the LLM ledger's memory after a rolled-back commit on Postgres");
  describe.skipIf(!d.available)(`LLM ledger memory after a rolled-back commit on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    useLedgerDatabase(d.name, (t) => ({ db, ledger, accounts } = t));

    test("a float the rolled-back transaction found gone still lends, and goes back whole at close", async () => {
      const a = await accounts.createAccount("rolled-back", 100 * C);
      let rollBack = false;
      const rolling = {
        ...db,
        tx: ((body) => {
          if (!rollBack) return db.tx(body);
          rollBack = false;
          return db.tx(function* (q) {
            // As a sweep would leave it: the float's hold is not pending when the batch takes the charge off it.
            yield* q.run(
              sql`update holds set status = ${"voided"} where account_id = ${a.id} and kind = ${"float"} and status = ${"pending"}`,
            );
            yield* body(q);
            throw new Error("connection reset before COMMIT"); // rolled back: the hold is pending again
          });
        }) as Db["tx"],
      };
      const b = newLlmLedger(rolling, ledger);
      const record = (requestId: string, cost: number) => usageRecord(a.id, requestId, cost);
      const first = await b.hold(a.id, C, "req_first"); // grows the float
      rollBack = true;
      b.postOrVoid({ hold: first, charge: 1000, record: record("req_first", 1000) });
      await b.drain(); // the batch is rolled back; its end is then written on its own
      expect(
        Number(
          (await db.get<{ n: number }>(sql`select count(*) as n from usage_records where account_id = ${a.id}`))!.n,
        ),
      ).toBe(1);

      // The float was never gone: the next call takes the free path, and no second float hold is made.
      expect(b.isFreePath(a.id, C)).toBe(true);
      const second = await b.hold(a.id, C, "req_second");
      b.postOrVoid({ hold: second, charge: 500, record: record("req_second", 500) });
      await b.close(2000);
      const holds = await db.all<{ status: string }>(
        sql`select status from holds where account_id = ${a.id} and kind = ${"float"}`,
      );
      expect(holds.map((h) => h.status)).toEqual(["voided"]);
      expect(await ledger.balance(a.id)).toEqual({ balance: 100 * C - 1500, held: 0, available: 100 * C - 1500 });
      expect(await ledger.check(a.id)).toEqual([]);
    });
  });
}
