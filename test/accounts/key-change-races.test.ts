// Changes to a key racing the calls that use it. A revocation or a policy change is seen at once by the process that
// made it (README: "at once on the same process"), even when a lookup of the key read its row just before the change
// and answers just after it: that lookup's stale record must not be cached for the next KEY_CACHE_MS. A budget set
// mid-period keeps the holds of calls that saw the new cap while the period's count was being started.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { budgetUsed, KeyBudgets } from "../../src/accounts/key-budgets";
import { Accounts } from "../../src/accounts/service";
import { openDatabase, type Db } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { databaseFor } from "../support/services";

let db: Db;
let drop: () => Promise<void>;
let accounts: Accounts;
/** When set, the next read answers only once this promise resolves (the row is read at once: before the change). */
let holdNextRead: Promise<void> | null = null;
/** When set, a sum over usage records (a budget's start) answers only once this promise resolves. */
let holdSpendRead: Promise<void> | null = null;

beforeAll(async () => {
  const target = await databaseFor("sqlite");
  drop = target.drop;
  db = await openDatabase(target.url);
  const slow: Db = Object.create(db);
  slow.get = async (s, values) => {
    const spend = holdSpendRead !== null && JSON.stringify(s).includes("usage_records");
    const gate = spend ? holdSpendRead : holdNextRead;
    if (spend) holdSpendRead = null;
    else holdNextRead = null;
    const row = await db.get(s, values);
    if (gate) await gate;
    return row as any;
  };
  accounts = new Accounts(slow, new Ledger(db));
});
afterAll(async () => {
  await db.close();
  await drop();
});

async function raced(change: (accountId: string, keyId: string) => Promise<unknown>) {
  const account = await accounts.createAccount("racer", 1_000_000);
  const k = await accounts.createKey(account.id, { name: "agent" });
  const { promise: gate, resolve: open } = Promise.withResolvers<void>();
  holdNextRead = gate;
  const lookup = accounts.authenticate(k.key); // reads the row now, answers after the change
  await change(account.id, k.id);
  open();
  await lookup;
  return k.key;
}

test("a key revoked while a lookup of it was under way is refused on the next call", async () => {
  const key = await raced((accountId, keyId) => accounts.revokeKey(accountId, keyId));
  expect(await accounts.authenticate(key)).toBeNull();
});

test("a model list set while a lookup was under way holds on the next call", async () => {
  const key = await raced((accountId, keyId) => accounts.updateKey(accountId, keyId, { models: ["gpt-5.2"] }));
  expect((await accounts.authenticate(key))?.models).toEqual(["gpt-5.2"]);
});

test("a call that holds against a budget just set is still counted once the period's count is started", async () => {
  const C = 1_000_000;
  const account = await accounts.createAccount("capped", 1000 * C);
  const k = await accounts.createKey(account.id, { name: "agent" });
  const { promise: gate, resolve: open } = Promise.withResolvers<void>();
  holdSpendRead = gate;
  const patch = accounts.updateKey(account.id, k.id, { budget: { day: 10 * C } });
  setTimeout(open, 50);
  // A call on another process: it holds as soon as the key's row shows the cap (its cache lapsed).
  for (;;) {
    const row = await db.get<any>(sql`select budget_day from api_keys where id = ${k.id}`);
    if (row?.budget_day != null) break;
    await Bun.sleep(1);
  }
  await new KeyBudgets(db, (e) => {
    throw e;
  }).hold({ keyId: k.id, budget: { day: 10 * C } }, 4 * C);
  await patch;
  expect((await budgetUsed(db, k.id, Date.now())).day).toBe(4 * C);
});
