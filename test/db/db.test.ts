import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../../src/db/client";
import { newId } from "../../src/db/ids";
import { databaseFor, dialects, skipNote } from "../support/services";

// Statements with named placeholders are compiled once and run with each call's values (db/client.ts). A cache
// that kept the first call's values, or filled a placeholder from the wrong name, would charge the wrong wallet.

const p = sql.placeholder;
const WALLET = sql`select account_id, balance from wallets where account_id = ${p("account")} and balance >= ${p("min")}`;
const TOUCH = sql`update wallets set balance = balance + ${p("delta")}, held = held + ${0}, updated_at = ${p("now")} where account_id = ${p("account")}`;

const SET = sql`update wallets set balance = ${p("balance")}, updated_at = ${p("now")} where account_id = ${p("account")}`;

/** A fresh database with two wallets: acct_a holding 10, acct_b 20. */
async function withWallets(name: "sqlite" | "pg") {
  const target = await databaseFor(name);
  const db = await openDatabase(target.url);
  for (const [id, balance] of [
    ["acct_a", 10],
    ["acct_b", 20],
  ] as const)
    await db.run(
      sql`insert into wallets (account_id, balance, held, updated_at) values (${id}, ${balance}, ${0}, ${0})`,
    );
  return { db, drop: target.drop };
}

for (const d of dialects) {
  skipNote("Postgres", d.available, "compiled statements on Postgres");
  describe.skipIf(!d.available)(`compiled statements on ${d.name}`, () => {
    let db: Db;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ db, drop } = await withWallets(d.name));
    });
    afterAll(async () => {
      await db.close();
      await drop();
    });

    test("each call binds its own values, outside and inside transactions", async () => {
      expect(await db.get(WALLET, { account: "acct_a", min: 0 })).toEqual({ account_id: "acct_a", balance: 10 });
      expect(await db.get(WALLET, { account: "acct_b", min: 0 })).toEqual({ account_id: "acct_b", balance: 20 });
      expect(await db.get(WALLET, { account: "acct_b", min: 21 })).toBeUndefined();
      const changed = await db.tx(function* (q) {
        const a = yield* q.run(TOUCH, { delta: 5, now: 1, account: "acct_a" });
        const b = yield* q.run(TOUCH, { delta: -5, now: 2, account: "acct_b" });
        return a + b;
      });
      expect(changed).toBe(2);
      expect(await db.all(sql`select account_id, balance from wallets order by account_id`)).toEqual([
        { account_id: "acct_a", balance: 15 },
        { account_id: "acct_b", balance: 15 },
      ]);
    });

    test("a missing value is an error naming the placeholder, and nothing is written", async () => {
      await expect(db.run(TOUCH, { delta: 1, account: "acct_a" })).rejects.toThrow('no value for placeholder "now"');
      await expect(
        db.tx(function* (q) {
          yield* q.run(TOUCH, { delta: 100, now: 3, account: "acct_a" });
          yield* q.run(TOUCH, { delta: 100, account: "acct_b" });
        }),
      ).rejects.toThrow('no value for placeholder "now"');
      expect((await db.get<any>(WALLET, { account: "acct_a", min: 0 }))!.balance).toBe(15);
    });

    test("values in order bind a statement of placeholders only; any other is an error, and nothing is written", async () => {
      expect(await db.run(SET, [16, 4, "acct_a"])).toBe(1);
      expect(await db.run(SET, [14, 4, "acct_b"])).toBe(1);
      // A statement with a fixed value, or too few values: which value is which would be a guess.
      await expect(db.run(TOUCH, [1, 5, "acct_a"])).rejects.toThrow("3 values in order for 4 parameters");
      await expect(
        db.tx(function* (q) {
          yield* q.run(SET, [100, 5, "acct_a"]);
          yield* q.run(SET, [100, "acct_b"]);
        }),
      ).rejects.toThrow("2 values in order for 3 parameters");
      expect(await db.all(sql`select account_id, balance from wallets order by account_id`)).toEqual([
        { account_id: "acct_a", balance: 16 },
        { account_id: "acct_b", balance: 14 },
      ]);
    });
  });
}

// Lists sort by `created_at desc, id desc`: rows made in the same millisecond (an LLM call's usage record and the
// next one's) must still come back in the order they were made.
test("ids made in a burst sort, as text, in the order they were made", () => {
  const ids = Array.from({ length: 5000 }, () => newId("use"));
  expect([...ids].sort()).toEqual(ids);
});
