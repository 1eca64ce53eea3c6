// A revocation or a policy change is seen at once by the process that made it (README: "at once on the same
// process"), even when a lookup of the key read its row just before the change and answers just after it: that
// lookup's stale record must not be cached for the next KEY_CACHE_MS.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Accounts } from "../../src/accounts/service";
import { openDatabase, type Db } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { databaseFor } from "../support/services";

let db: Db;
let drop: () => Promise<void>;
let accounts: Accounts;
/** When set, the next read answers only once this promise resolves (the row is read at once: before the change). */
let holdNextRead: Promise<void> | null = null;

beforeAll(async () => {
  const target = await databaseFor("sqlite");
  drop = target.drop;
  db = await openDatabase(target.url);
  const slow: Db = Object.create(db);
  slow.get = async (s, values) => {
    const gate = holdNextRead;
    holdNextRead = null;
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
