// LlmLedger<Finish>.drain() (src/ledger/llm-ledger.ts) waits for what was queued when it was called, not for the commit
// loop to go idle: under steady load on Postgres calls keep finishing while each commit awaits the network, so the
// loop may never be idle, and GET /v1/usage, returnIdle (a media task's hold) and shutdown all wait on drain().
// The first tests make that deterministic on SQLite: the transaction awaits first, as Postgres does, and a call
// finishes while every commit waits. The last one is the same on a real Postgres, through GET /v1/usage.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import type { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { silentLogger } from "../../src/log";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import { fromFloat, newLlmLedger } from "../support/llm-ledger";
import { registry } from "../../src/ops/metrics";
import type { Finish, UsageRecord } from "../../src/llm/records";
import { startGateway, type TestGateway } from "../support/gateway";
import { closeBatches, databaseFor, pgAvailable, skipNote, useLedgerDatabase } from "../support/services";

const record = (accountId: string, requestId: string, keyId = "key_t", model = "m"): UsageRecord => ({
  requestId,
  accountId,
  keyId,
  model,
  endpoint: "/v1/chat/completions",
  provider: "openai",
  status: "ok",
  upstreamStatus: 200,
  usage: null,
  cost: 1,
  latencyMs: 1,
  ttfbMs: 1,
  error: null,
});

/** A call that reserves from the float in memory (the float must cover it) and finishes at once, charged 1 µcr. */
async function call(b: LlmLedger<Finish>, accountId: string, requestId: string, keyId?: string, model?: string) {
  const r = await fromFloat(b, accountId, 1, requestId);
  b.postOrVoid({ hold: r, charge: 1, record: record(accountId, requestId, keyId, model) });
}

/** "drained", or "timed out" when drain() has not resolved within `ms`. */
const within = (p: Promise<void>, ms: number) =>
  Promise.race([p.then(() => "drained"), Bun.sleep(ms).then(() => "timed out")]);

describe("drain() under steady load (SQLite, transactions made to await as on Postgres)", () => {
  let db: Db;
  let ledger: Ledger;
  let accounts: Accounts;
  const batches: LlmLedger<Finish>[] = [];
  // Runs while each commit waits on the "network": another call finishes then, so the commit loop never goes idle.
  let duringCommit = () => {};
  useLedgerDatabase(
    "sqlite",
    (t) => ({ db, ledger, accounts } = t),
    async () => {
      duringCommit = () => {};
      await closeBatches(batches);
    },
  );

  const processOf = (database: Pick<Db, "tx"> = db, log = silentLogger) => {
    const slow = {
      ...db,
      tx: (async (body) => {
        duringCommit();
        await Bun.sleep(2);
        return database.tx(body);
      }) as Db["tx"],
    };
    const b = newLlmLedger(slow, ledger, {}, log);
    batches.push(b);
    return b;
  };
  const count = async (like: string) =>
    Number((await db.get<any>(sql`select count(*) as n from usage_records where request_id like ${like}`))!.n);

  test("resolves once what was queued before it is committed (more than one MAX_BATCH of it), while calls keep finishing", async () => {
    const a = await accounts.createAccount("drain-load", 1000 * C);
    const b = processOf();
    await b.hold(a.id, C, "first").then((r) => b.postOrVoid({ hold: r, charge: null, record: record(a.id, "first") })); // grows the float
    let n = 0;
    duringCommit = () => void call(b, a.id, `during-${n++}`);
    for (let i = 0; i < 1100; i++) await call(b, a.id, `before-${i}`); // three commits' worth (MAX_BATCH = 512)

    expect(await within(b.drain(), 500)).toBe("drained");
    expect(await count("before-%")).toBe(1100);
    expect(n).toBeGreaterThan(0); // calls did finish while it waited

    duringCommit = () => {};
    await b.drain();
    expect(await count("during-%")).toBe(n);
    // Each call settled once, and the books balance: the float's accounting is the same as without the load.
    expect(
      Number((await db.get<any>(sql`select count(*) as n from usage_records where account_id = ${a.id}`))!.n),
    ).toBe(1101 + n);
    expect(await ledger.check(a.id)).toEqual([]);
    await b.close(1000); // the float goes back to the wallet
    expect(await db.get<any>(sql`select balance, held from wallets where account_id = ${a.id}`)).toMatchObject({
      balance: 1000 * C - 1100 - n,
      held: 0,
    });
    expect(await ledger.check(a.id)).toEqual([]);
  });

  test("returnIdle gives an idle float back while another wallet's calls keep the loop busy", async () => {
    const idle = await accounts.createAccount("drain-idle", 10 * C);
    const busy = await accounts.createAccount("drain-busy", 1000 * C);
    const b = processOf();
    await b.hold(idle.id, C, "i").then((r) => b.postOrVoid({ hold: r, charge: null, record: record(idle.id, "i") }));
    await b.hold(busy.id, C, "b").then((r) => b.postOrVoid({ hold: r, charge: null, record: record(busy.id, "b") }));
    let n = 0;
    duringCommit = () => void call(b, busy.id, `busy-${n++}`);
    await call(b, busy.id, "busy-start");

    const returned = b.returnIdle(idle.id);
    expect(
      await within(
        returned.then(() => {}),
        500,
      ),
    ).toBe("drained");
    expect(await returned).toBe(true);
    expect(await db.get<any>(sql`select balance, held from wallets where account_id = ${idle.id}`)).toMatchObject({
      balance: 10 * C,
      held: 0,
    });
    duringCommit = () => {};
  });

  test("a failed commit ends too: drain() does not wait for the retries of what was queued after it", async () => {
    const errors: string[] = [];
    const failing = { tx: () => Promise.reject(new Error("connection reset")) } as unknown as Db;
    const b = processOf(failing, { ...silentLogger, error: (msg: string) => void errors.push(msg) });
    // Calls that reserve nothing need no float, so no database work before they finish.
    const free = async (ref: string) =>
      b.postOrVoid({ hold: await fromFloat(b, "acct_x", 0, ref), charge: null, record: record("acct_x", ref) });
    let n = 0;
    duringCommit = () => void free(`failing-${n++}`);
    for (let i = 0; i < 3; i++) await free(`queued-${i}`);

    expect(await within(b.drain(), 500)).toBe("drained");
    expect(errors).toContain("llm ledger batch failed");
    expect(errors).toContain("llm ledger write failed");
    duringCommit = () => {};
  });

  test("the settled-credits metric counts a charge once committed, never one whose writes failed", async () => {
    const settled = async () => {
      const text = await registry.getSingleMetricAsString("switchyard_credits_settled_micro_credits_total");
      return Number(/kind="llm"} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const a = await accounts.createAccount("metric", 10 * C);
    const failing = processOf({ tx: () => Promise.reject(new Error("connection reset")) } as unknown as Db);
    const charged = async (b: LlmLedger<Finish>, ref: string) =>
      b.postOrVoid({ hold: await fromFloat(b, "acct_y", 0, ref), charge: 7, record: record("acct_y", ref) });
    for (const b of batches) if (b !== failing) await b.drain(); // the earlier tests' last calls count first
    const before = await settled();
    await charged(failing, "lost");
    await failing.drain();
    expect(await settled()).toBe(before);

    const working = processOf();
    await working
      .hold(a.id, C, "grow")
      .then((r) => working.postOrVoid({ hold: r, charge: 5, record: record(a.id, "grow") }));
    await working.drain();
    expect(await settled()).toBe(before + 5);
  });
});

skipNote("Postgres", pgAvailable, "drain() under steady load on Postgres");
describe.skipIf(!pgAvailable)("GET /v1/usage under steady load on Postgres", () => {
  let gw: TestGateway;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const target = await databaseFor("pg");
    drop = target.drop;
    gw = await startGateway({ DATABASE_URL: target.url, LEDGER_FLOAT_IDLE_MS: "60000" });
  });
  afterAll(async () => {
    await gw.stop();
    await drop();
  });

  test("answers promptly with the records of calls that finished before it, while others keep finishing", async () => {
    const { accountId, key, keyId } = await gw.account(1000);
    const b = gw.ctx.llmLedger;
    await b
      .hold(accountId, C, "first")
      .then((r) => b.postOrVoid({ hold: r, charge: null, record: record(accountId, "first", keyId) }));
    // A steady stream: two calls finish every millisecond, so some always finish while a commit awaits Postgres.
    let n = 0;
    const stream = setInterval(() => {
      for (let i = 0; i < 2; i++) void call(b, accountId, `stream-${n++}`, keyId);
    }, 1);
    try {
      await Bun.sleep(50);
      for (let i = 0; i < 20; i++) await call(b, accountId, `marked-${i}`, keyId, "marked");
      const res = await within(
        fetch(gw.url + "/v1/usage?model=marked", { headers: { authorization: `Bearer ${key}` } }).then(async (r) => {
          expect(r.status).toBe(200);
          const ids = ((await r.json()) as { data: Array<{ request_id: string }> }).data
            .map((u) => u.request_id)
            .sort();
          expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => `marked-${i}`).sort());
        }),
        1000,
      );
      expect(res).toBe("drained");
    } finally {
      clearInterval(stream);
    }
    await b.drain();
    const rows = await gw.ctx.db.get<any>(
      sql`select count(*) as n from usage_records where request_id like 'stream-%'`,
    );
    expect(Number(rows!.n)).toBe(n);
    expect(await gw.ctx.ledger.check(accountId)).toEqual([]);
  });
});
