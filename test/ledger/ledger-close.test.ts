// Shutdown when the database does not answer at all (helper-28): a SQLite lock held by another process, a Postgres
// wallet row locked by another session. Every wait in LlmLedger<Finish>.close() is bounded, so the charge it cannot write
// is logged, call by call, before server.ts's own deadline (CLOSE_DEADLINE_MS) exits the process; before, close()
// waited on the commit and the retries without limit and the process exited with nothing logged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { sql } from "drizzle-orm";
import { Accounts } from "../../src/accounts/service";
import { openDatabase, type Db } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { silentLogger } from "../../src/log";
import { fromFloat, newLlmLedger, usageRecord } from "../support/llm-ledger";
import { CLOSE_DEADLINE_MS, LEDGER_CLOSE_MS } from "../../src/ops/shutdown";
import { freshPostgres, pgAvailable, skipNote, tempSqlitePath } from "../support/services";

function processOf(db: Db, ledger: Ledger) {
  const logged: Array<{ msg: string; fields: any }> = [];
  const log = { ...silentLogger, error: (msg: string, fields: any) => void logged.push({ msg, fields }) };
  const b = newLlmLedger(db, ledger, {}, log);
  return { b, logged };
}

/** What server.ts does: the process exits once closing the services has taken CLOSE_DEADLINE_MS. */
const closesInTime = (closing: Promise<void>) =>
  Promise.race([closing.then(() => true), Bun.sleep(CLOSE_DEADLINE_MS).then(() => false)]);

const abandoned = (logged: Array<{ msg: string; fields: any }>) =>
  logged.filter((l) => l.msg === "llm ledger write abandoned at shutdown").map((l) => l.fields);

describe("shutdown against a database that does not answer", () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  test("SQLite locked by another process: the unwritten charge is logged before server.ts exits", async () => {
    const path = tempSqlitePath();
    const db = await openDatabase(path);
    cleanups.push(() => db.close());
    const ledger = new Ledger(db);
    const a = await new Accounts(db, ledger).createAccount("close-locked", 100 * C);
    const { b, logged } = processOf(db, ledger);
    const r = await b.hold(a.id, C, "req_close_locked");
    const holder = Bun.spawn(
      [
        "bun",
        "-e",
        `
      import { Database } from "bun:sqlite";
      const db = new Database(${JSON.stringify(path)});
      db.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE");
      console.log("locked");
      await Bun.sleep(20000);
      db.exec("COMMIT");
    `,
      ],
      { stdout: "pipe", stderr: "inherit" },
    );
    cleanups.push(() => holder.kill());
    await holder.stdout.getReader().read();
    b.postOrVoid({ hold: r, charge: 1234, record: usageRecord(a.id, r.id, 1234) });
    const closing = b.close(LEDGER_CLOSE_MS);
    expect(await closesInTime(closing)).toBe(true);
    expect(abandoned(logged)).toContainEqual(
      expect.objectContaining({ request_id: r.id, account_id: a.id, charge: 1234 }),
    );
    holder.kill();
  }, 40_000);

  skipNote("Postgres", pgAvailable, "shutdown against a locked wallet row");
  test.skipIf(!pgAvailable)(
    "Postgres: the wallet row locked by another session: the charge is logged in time",
    async () => {
      const target = await freshPostgres();
      const db = await openDatabase(target.url, { poolSize: 3 });
      const other = new SQL(target.url, { max: 1 });
      cleanups.push(async () => {
        await other.close();
        await db.close();
        await target.drop();
      });
      const ledger = new Ledger(db);
      const a = await new Accounts(db, ledger).createAccount("close-row-lock", 100 * C);
      const { b, logged } = processOf(db, ledger);
      const r = await b.hold(a.id, C, "req_close_row_lock");
      const locked = other.begin(async (tx) => {
        await tx`select * from wallets where account_id = ${a.id} for update`; // an operator's psql session, say
        await Bun.sleep(CLOSE_DEADLINE_MS + 3000);
      });
      await Bun.sleep(200);
      b.postOrVoid({ hold: r, charge: 1234, record: usageRecord(a.id, r.id, 1234) });
      const closing = b.close(LEDGER_CLOSE_MS);
      expect(await closesInTime(closing)).toBe(true);
      expect(abandoned(logged)).toContainEqual(
        expect.objectContaining({ request_id: r.id, account_id: a.id, charge: 1234, may_have_been_written: true }),
      );
      await locked;
      await closing;
    },
    40_000,
  );
});

describe("shutdown while the database is slow (helper-29)", () => {
  let db: Db;
  let ledger: Ledger;
  let accounts: Accounts;
  let closeDb: () => Promise<void>;
  beforeAll(async () => {
    db = await openDatabase(tempSqlitePath());
    ledger = new Ledger(db);
    accounts = new Accounts(db, ledger);
    closeDb = () => db.close();
  });
  afterAll(() => closeDb());

  const slowProcess = () => {
    const state = { down: false, stallMs: 0 };
    const slow = {
      ...db,
      tx: (async (body) => {
        if (state.down) throw new Error("connection reset");
        if (state.stallMs) await Bun.sleep(state.stallMs);
        if (state.down) throw new Error("connection reset");
        return db.tx(body);
      }) as Db["tx"],
    };
    const { b, logged } = processOf(slow, ledger);
    return { b, logged, state };
  };

  test("a retry pass stuck on its first piece: every unwritten call is logged, once", async () => {
    const a = await accounts.createAccount("close-pass", 100 * C);
    const { b, logged, state } = slowProcess();
    const calls = [
      await b.hold(a.id, 2 * C, "req_pass_1"),
      await fromFloat(b, a.id, C, "req_pass_2"),
      await fromFloat(b, a.id, C, "req_pass_3"),
    ];
    state.down = true;
    for (const [i, r] of calls.entries())
      b.postOrVoid({ hold: r, charge: 1000 + i, record: usageRecord(a.id, r.id, 1000 + i) });
    await b.drain(); // three pieces queued for a retry
    state.down = false;
    state.stallMs = 3000; // the database takes each write, after 3 s
    await b.close(1000);
    expect(
      abandoned(logged)
        .map((f) => f.request_id)
        .sort(),
    ).toEqual(["req_pass_1", "req_pass_2", "req_pass_3"]);
  }, 15_000);

  test("a commit still under way when close() returns neither retries nor logs the call again", async () => {
    const a = await accounts.createAccount("close-after", 100 * C);
    const { b, logged, state } = slowProcess();
    const r = await b.hold(a.id, C, "req_close_after");
    state.stallMs = 1500;
    b.postOrVoid({ hold: r, charge: 1234, record: usageRecord(a.id, r.id, 1234) });
    await b.close(1000);
    state.down = true; // the database closes under the commit still waiting
    await Bun.sleep(2500);
    expect(logged.filter((l) => l.fields?.request_id === r.id).map((l) => l.msg)).toEqual([
      "llm ledger write abandoned at shutdown",
    ]);
  }, 15_000);
});

test("a call logged never_attempted at shutdown is not written afterwards (a zero reservation: no float keeps close() going)", async () => {
  const db = await openDatabase(tempSqlitePath());
  try {
    const ledger = new Ledger(db);
    const a = await new Accounts(db, ledger).createAccount("close-none", 100 * C);
    const { b, logged } = processOf(db, ledger);
    const r = await b.hold(a.id, 0, "req_close_none"); // a model priced at zero reserves nothing
    b.postOrVoid({ hold: r, charge: 500, record: usageRecord(a.id, r.id, 500) });
    await b.close(2000);
    await Bun.sleep(100);
    const neverAttempted = abandoned(logged).some((f) => f.request_id === r.id && f.never_attempted);
    const written = (await db.all(sql`select request_id from usage_records where request_id = ${r.id}`)).length === 1;
    expect({ neverAttempted, written }).toEqual({ neverAttempted: false, written: true }); // written by close(), not logged
  } finally {
    await db.close();
  }
});
