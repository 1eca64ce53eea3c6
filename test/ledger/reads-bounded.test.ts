// Reads of an account's records or balance wait for that account's queued charges, for a moment at most
// (LlmLedger<Finish>.committedFor): a commit held up elsewhere (here a wallet row locked by another Postgres session) must
// not hold up every account's GET /v1/credits, GET /v1/usage or top-up; they hung behind it (helper-29).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { usageRecord } from "../support/llm-ledger";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { startGateway, type TestGateway } from "../support/gateway";
import { freshPostgres, pgAvailable, skipNote } from "../support/services";

skipNote("Postgres", pgAvailable, "reads beside a locked wallet row");
describe.skipIf(!pgAvailable)("a wallet row locked elsewhere (Postgres)", () => {
  let gw: TestGateway;
  let drop = async () => {};
  let other: SQL;
  beforeAll(async () => {
    const target = await freshPostgres();
    drop = target.drop;
    other = new SQL(target.url, { max: 1 });
    gw = await startGateway({ DATABASE_URL: target.url, LEDGER_FLOAT_IDLE_MS: "60000" });
  });
  afterAll(async () => {
    await gw.stop();
    await other.close();
    await drop();
  });

  test("does not hold up another account's reads or top-up; the locked account's own read answers too", async () => {
    const a = await gw.account(100);
    const b = await gw.account(100);
    const ledger = gw.ctx.llmLedger;
    const hold = await ledger.hold(b.accountId, C, "req_locked_b");
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const locked = other.begin(async (tx) => {
      await tx`select * from wallets where account_id = ${b.accountId} for update`; // an operator's psql session, say
      await released;
    });
    await Bun.sleep(200);
    ledger.postOrVoid({ hold, charge: C / 2, record: usageRecordOf(b, "req_locked_b", C / 2) }); // its commit waits for the lock
    await Bun.sleep(50);
    try {
      expect(await timed(() => fetch(gw.url + "/v1/credits", opts(a.key)))).toEqual({ status: 200, fast: true });
      expect(await timed(() => fetch(gw.url + "/v1/usage", opts(a.key)))).toEqual({ status: 200, fast: true });
      expect(
        await timed(() =>
          gw.admin(`/admin/v1/accounts/${a.accountId}/credits`, {
            method: "POST",
            body: JSON.stringify({ credits: 5 }),
            signal: AbortSignal.timeout(3000),
          }),
        ),
      ).toEqual({ status: 200, fast: true });
      // The locked account's own balance answers too, without the charge still waiting for the lock.
      expect(await timed(() => fetch(gw.url + "/v1/credits", opts(b.key)))).toEqual({ status: 200, fast: true });
    } finally {
      release();
      await locked;
    }
    await ledger.drain();
    expect(await gw.ctx.ledger.check(b.accountId)).toEqual([]);
  }, 20_000);

  test("a correction that needs the account's idle float back answers promptly too (200 or 409, never a hang)", async () => {
    const a = await gw.account(100);
    const b = await gw.account(100);
    const ledger = gw.ctx.llmLedger;
    const ha = await ledger.hold(a.accountId, 10 * C, "req_a_idle");
    ledger.postOrVoid({
      hold: ha,
      charge: C,
      record: usageRecord(a.accountId, "req_a_idle", C, { keyId: a.keyId, model: "gpt-5.2" }),
    });
    await ledger.drain();
    const before = (await gw.ctx.ledger.balance(a.accountId))!;
    expect(before.held).toBeGreaterThan(0); // the idle float
    const hb = await ledger.hold(b.accountId, C, "req_b_locked");
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const locked = other.begin(async (tx) => {
      await tx`select * from wallets where account_id = ${b.accountId} for update`;
      await released;
    });
    await Bun.sleep(200);
    ledger.postOrVoid({
      hold: hb,
      charge: C / 2,
      record: usageRecord(b.accountId, "req_b_locked", C / 2, { keyId: b.keyId, model: "gpt-5.2" }),
    });
    await Bun.sleep(50);
    try {
      const t0 = performance.now();
      const status = await gw
        .admin(`/admin/v1/accounts/${a.accountId}/credits`, {
          method: "POST",
          body: JSON.stringify({ credits: -(before.available / C + 1), kind: "correction" }),
          signal: AbortSignal.timeout(3000),
        })
        .then(
          (r) => r.status,
          (e) => String(e),
        );
      expect({ status: [200, 409].includes(status as number), fast: performance.now() - t0 < 1000 }).toEqual({
        status: true,
        fast: true,
      });
    } finally {
      release();
      await locked;
    }
    await ledger.drain();
  }, 20_000);
});

/** A call's usage record on `key`'s account, charged `cost`. */
const usageRecordOf = (key: { accountId: string; keyId: string }, requestId: string, cost: number) =>
  usageRecord(key.accountId, requestId, cost, { keyId: key.keyId, model: "gpt-5.2" });

/** The answer's status (or the error it failed with), and whether it came within a second. */
async function timed(send: () => Promise<Response>) {
  const t0 = performance.now();
  const status = await send().then(
    (r) => r.status,
    (e) => String(e),
  );
  return { status, fast: performance.now() - t0 < 1000 };
}

/** A customer's GET with `key`, given up after 3 s (a read that waits on a lock must not hang the test). */
const opts = (key: string) => ({
  headers: { authorization: `Bearer ${key}` },
  signal: AbortSignal.timeout(3000),
});
