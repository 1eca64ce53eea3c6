import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../../src/db/client";
import { Accounts } from "../../src/accounts/service";
import { Ledger } from "../../src/ledger/service";
import { startGateway } from "../support/gateway";
import { freshPostgres, pgAvailable, skipNote } from "../support/services";
import { jsonOf, type AnswerOf } from "../support/json";
import type { AccountList, AccountView } from "../../src/accounts/model";

// Bun.SQL returns int8 and numeric as strings; db/client.ts turns those into numbers by the column's type, never by
// what a value looks like. Text that happens to be digits ("007", "-5", "1e3") must come back as the same string, as
// it does on SQLite, while integer columns and COUNT/SUM come back as numbers.

skipNote("Postgres", pgAvailable, "Postgres value types (text that looks like a number, int8, numeric)");

const DIGIT_TEXTS = ["007", "12", "-5", "1e3", "0", " 42", "1.50"];

describe.skipIf(!pgAvailable)("values read from Postgres", () => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const target = await freshPostgres();
    drop = target.drop;
    db = await openDatabase(target.url);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  test("text columns holding digits come back as the same strings, outside and inside transactions", async () => {
    for (const [i, name] of DIGIT_TEXTS.entries()) {
      await db.run(sql`insert into accounts (id, name, created_at) values (${`acct_t${i}`}, ${name}, ${1000 + i})`);
    }
    const rows = await db.all<{ id: string; name: string }>(
      sql`select id, name from accounts where id like ${"acct_t%"} order by created_at`,
    );
    expect(rows.map((r) => r.name)).toEqual(DIGIT_TEXTS);
    const one = await db.get<{ name: string; created_at: number }>(
      sql`select name, created_at from accounts where id = ${"acct_t0"}`,
    );
    expect(one).toEqual({ name: "007", created_at: 1000 });
    const inTx = await db.tx(function* (q) {
      return yield* q.all<{ name: string }>(
        sql`select name from accounts where id like ${"acct_t%"} order by created_at`,
      );
    });
    expect(inTx.map((r) => r.name)).toEqual(DIGIT_TEXTS);
    // A digits-only text expression (no table behind it) too.
    expect(await db.get(sql`select ${"12"}::text as t, '-5' as u`)).toEqual({ t: "12", u: "-5" });
  });

  test("integer columns and COUNT/SUM/COALESCE/MAX aggregates come back as numbers; null stays null", async () => {
    await db.run(
      sql`insert into wallets (account_id, balance, held, updated_at) values (${"acct_n1"}, ${1_500_000}, ${0}, ${1_700_000_000_000})`,
    );
    await db.run(
      sql`insert into wallets (account_id, balance, held, updated_at) values (${"acct_n2"}, ${-250}, ${7}, ${1})`,
    );
    const w = await db.get(
      sql`select account_id, balance, held, updated_at from wallets where account_id = ${"acct_n1"}`,
    );
    expect(w).toEqual({ account_id: "acct_n1", balance: 1_500_000, held: 0, updated_at: 1_700_000_000_000 });
    const agg = await db.get(sql`select count(*) as n, sum(balance) as total, coalesce(sum(held), 0) as held,
        coalesce(sum(balance) filter (where account_id = ${"nobody"}), 0) as none, max(updated_at) as latest, min(balance) as lowest,
        sum(balance) filter (where account_id = ${"nobody"}) as missing
      from wallets where account_id like ${"acct_n%"}`);
    expect(agg).toEqual({
      n: 2,
      total: 1_499_750,
      held: 7,
      none: 0,
      latest: 1_700_000_000_000,
      lowest: -250,
      missing: null,
    });
    for (const v of Object.values(agg!)) if (v !== null) expect(typeof v).toBe("number");
    // A nullable integer column: null stays null, a value is a number.
    await db.run(sql`insert into api_keys (id, account_id, name, prefix, key_hash, rate_requests, created_at)
      values (${"key_n1"}, ${"acct_n1"}, ${"42"}, ${"sk-sy-000000"}, ${"0123"}, ${60}, ${5})`);
    const k = await db.get(
      sql`select name, prefix, key_hash, rate_requests, rate_window_seconds, revoked_at, created_at from api_keys where id = ${"key_n1"}`,
    );
    expect(k).toEqual({
      name: "42",
      prefix: "sk-sy-000000",
      key_hash: "0123",
      rate_requests: 60,
      rate_window_seconds: null,
      revoked_at: null,
      created_at: 5,
    });
  });

  test('the accounts service lists an account named "007" by that name, with a key named "42" and a credit reason "12345"', async () => {
    const ledger = new Ledger(db);
    const accounts = new Accounts(db, ledger);
    const a = await accounts.createAccount("007", 1_000_000);
    expect((await accounts.listAccounts()).find((r) => r.id === a.id)).toMatchObject({ id: a.id, name: "007" });
    expect(await accounts.getAccount(a.id)).toMatchObject({ name: "007" });
    await accounts.createKey(a.id, { name: "42" });
    expect((await accounts.listKeys(a.id)).map((k) => k.name)).toEqual(["42"]);
    await ledger.credit(a.id, 500, "topup", "12345");
    const reasons = await db.all<{ reason: string; amount: number }>(
      sql`select reason, amount from entries where account_id = ${a.id} order by created_at, id`,
    );
    expect(reasons).toEqual([
      { reason: "initial credits", amount: 1_000_000 },
      { reason: "12345", amount: 500 },
    ]);
  });
});

test.skipIf(!pgAvailable)('admin API on Postgres: an account named "007" lists and shows as "007"', async () => {
  const target = await freshPostgres();
  const gw = await startGateway({ DATABASE_URL: target.url });
  try {
    const post = (path: string, body: unknown) => gw.admin(path, { method: "POST", body: JSON.stringify(body) });
    const created = await post("/admin/v1/accounts", { name: "007", credits: 15 });
    expect(created.status).toBe(201);
    const acct = await jsonOf<AnswerOf<typeof AccountView>>(created);
    expect(acct).toMatchObject({ name: "007", credits: 15 });
    await post(`/admin/v1/accounts/${acct.id}/credits`, { credits: 1, reason: "2024" });
    const list = await jsonOf<AnswerOf<typeof AccountList>>(await gw.admin("/admin/v1/accounts"));
    expect(list.data.find((a) => a.id === acct.id)).toMatchObject({ name: "007" });
    expect(typeof list.data[0]!.created_at).toBe("number");
    const view = await jsonOf<AnswerOf<typeof AccountView>>(await gw.admin(`/admin/v1/accounts/${acct.id}`));
    expect(view).toMatchObject({ name: "007", credits: 16 });
    expect(view.ledger!.map((e) => [e.reason, e.micro_credits])).toEqual([
      ["2024", 1_000_000],
      [expect.any(String), 15_000_000],
    ]);
  } finally {
    await gw.stop();
    await target.drop();
  }
});
