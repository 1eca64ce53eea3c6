// The calls' usage records as the group commit writes them (src/llm/records.ts): several to a statement, of each size
// in RECORDS_PER_INSERT. Every record must come back with its own values, in every column, whichever statement wrote
// it; and a commit reported failed although it went through must still charge each call once.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import type { Reservation } from "../../src/ledger/float";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import type { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { silentLogger } from "../../src/log";
import { RECORDS_PER_INSERT, type Finish, type UsageRecord } from "../../src/llm/records";
import { newLlmLedger, usageRecord, useLlmLedgerDatabase } from "../support/llm-ledger";
import { dialects, skipNote } from "../support/services";

/** Two of the largest inserts, then one of each other size. */
const CALLS = RECORDS_PER_INSERT[0]! + RECORDS_PER_INSERT.reduce((sum, rows) => sum + rows, 0);

/** The i-th call's record, every column different from its neighbours'; every seventh call is voided. */
function recordOf(accountId: string, requestId: string, i: number): { charge: number | null; record: UsageRecord } {
  const charge = i % 7 === 3 ? null : 100 + i;
  return {
    charge,
    record: usageRecord(accountId, requestId, charge ?? 0, {
      keyId: `key_${i % 3}`,
      model: `model-${i}`,
      endpoint: i % 2 ? "/v1/messages" : "/v1/chat/completions",
      provider: i % 2 ? "anthropic" : "openai",
      status: charge === null ? "upstream_error" : "ok",
      upstreamStatus: charge === null ? 500 : 200,
      usage:
        i % 5 === 0
          ? null
          : { input: i, output: 2 * i, cacheRead: i % 3, cacheWrite: i % 4, cacheWrite1h: i % 2, webSearches: i % 5 },
      latencyMs: 10 + i,
      ttfbMs: i % 4 === 0 ? null : i,
      error: charge === null ? `upstream said no to call ${i}` : null,
      endedAt: 1_700_000_000_000 + i,
    }),
  };
}

/** The i-th call's usage record as a row should read back (`entryId`: its wallet's usage entry in the commit). */
function rowOf(account: string, id: string, i: number, entryId: string) {
  const { charge, record } = recordOf(account, id, i);
  const usage = record.usage;
  return {
    id,
    request_id: id,
    account_id: account,
    key_id: record.keyId,
    model: record.model,
    endpoint: record.endpoint,
    provider: record.provider,
    status: record.status,
    upstream_status: record.upstreamStatus,
    input_tokens: usage?.input ?? 0,
    output_tokens: usage?.output ?? 0,
    cache_read_tokens: usage?.cacheRead ?? 0,
    cache_write_tokens: usage?.cacheWrite ?? 0,
    cache_write_1h_tokens: usage?.cacheWrite1h ?? 0,
    web_search_calls: usage?.webSearches ?? 0,
    cost: charge ?? 0,
    held: C,
    entry_id: charge === null ? null : entryId,
    latency_ms: record.latencyMs,
    ttfb_ms: record.ttfbMs,
    error: record.error,
    created_at: record.endedAt,
  };
}

/** What the CALLS calls charge in all. */
const chargedInAll = () =>
  Array.from({ length: CALLS }, (_, i) => recordOf("", "", i).charge ?? 0).reduce((a, b) => a + b);

/** `db` whose next `ghosts` transactions commit and are then reported failed (a connection lost after COMMIT). */
function ghostly(db: Db) {
  const state = { ghosts: 0 };
  const tx = (async (body) => {
    const r = await db.tx(body);
    if (state.ghosts > 0 && state.ghosts--) throw new Error("connection reset after COMMIT was sent");
    return r;
  }) as Db["tx"];
  return { db: { ...db, tx }, state };
}

/** CALLS reservations of 1 credit each on a fresh account, held before any of them ends. */
async function reserved(b: LlmLedger<Finish>, accounts: Accounts, name: string) {
  const a = await accounts.createAccount(name, 1000 * C);
  const ids = Array.from({ length: CALLS }, (_, i) => `req_${Bun.randomUUIDv7()}_${i}`);
  return { account: a.id, holds: await Promise.all(ids.map((id) => b.hold(a.id, C, id))) };
}

/** The i-th call ends, charged or voided as recordOf says. */
const end = (b: LlmLedger<Finish>, r: Reservation, i: number) =>
  b.postOrVoid({ hold: r, ...recordOf(r.accountId, r.id, i) });

for (const d of dialects) {
  skipNote("Postgres", d.available, `usage records on ${d.name}`);
  describe.skipIf(!d.available)(`usage records on ${d.name}`, () => {
    let db: Db;
    let ledger: Ledger;
    let accounts: Accounts;
    const batches = useLlmLedgerDatabase(d.name, (t) => ({ db, ledger, accounts } = t));
    const balance = async (id: string) =>
      Number((await db.get<any>(sql`select balance from wallets where account_id = ${id}`))!.balance);

    test(`${CALLS} calls in one commit: each record has its own values, the books balance`, async () => {
      const b = newLlmLedger(db, ledger, { commitIntervalMs: 60_000 });
      batches.push(b);
      const { account, holds } = await reserved(b, accounts, "records-many");
      const before = await balance(account);
      holds.forEach((r, i) => end(b, r, i));
      await b.drain();

      const entries = await db.all<{ id: string; amount: number }>(
        sql`select id, amount from entries where account_id = ${account} and kind = ${"usage"}`,
      );
      expect(entries).toHaveLength(1); // one commit wrote them all
      const charged = chargedInAll();
      expect(Number(entries[0]!.amount)).toBe(-charged);
      expect(await balance(account)).toBe(before - charged);

      const rows = await db.all<any>(sql`select * from usage_records where account_id = ${account}`);
      const byId = new Map(rows.map((row) => [row.id, row]));
      expect(byId.size).toBe(CALLS);
      holds.forEach((r, i) => expect(byId.get(r.id)).toEqual(rowOf(account, r.id, i, entries[0]!.id)));
      expect(await ledger.check(account)).toEqual([]);
    });

    test(`a commit of ${CALLS} calls reported failed although it went through charges each call once`, async () => {
      const flaky = ghostly(db);
      const logged: string[] = [];
      const log = { ...silentLogger, error: (msg: string) => void logged.push(msg) };
      const b = newLlmLedger(flaky.db, ledger, { commitIntervalMs: 60_000 }, log);
      batches.push(b);
      const { account, holds } = await reserved(b, accounts, "records-ghost");
      const before = await balance(account);
      flaky.state.ghosts = 1;
      holds.forEach((r, i) => end(b, r, i));
      await b.committedFor(account, 5000); // the commit, then each call's retry, which finds its record written
      const charged = chargedInAll();
      const count = await db.get<any>(sql`select count(*) as n from usage_records where account_id = ${account}`);
      expect(Number(count!.n)).toBe(CALLS);
      expect(await balance(account)).toBe(before - charged);
      expect(await ledger.check(account)).toEqual([]);
      expect(logged).toContain("llm ledger batch failed");
      expect(logged.filter((m) => m.startsWith("llm ledger write"))).toEqual([]);
    });
  });
}
