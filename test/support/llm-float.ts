// The LLM float's tests' set-up: a describe block's own ledger database, the gateway processes (LLM ledgers) made on
// it and closed before it is dropped, and the reads of what the float did: wallets, holds, usage lines and entries.
import { sql } from "drizzle-orm";
import type { Db } from "../../src/db/client";
import type { Reservation } from "../../src/ledger/float";
import type { Ledger } from "../../src/ledger/service";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import type { Finish } from "../../src/llm/records";
import { newLlmLedger, usageRecord, useLlmLedgerDatabase } from "./llm-ledger";
import type { LedgerDatabase } from "./services";

/** Makes the block's database (handed to `use`, as useLedgerDatabase does) and the helpers reading it. */
export function useLlmFloat(name: "sqlite" | "pg", use: (t: LedgerDatabase) => void) {
  let db: Db;
  let ledger: Ledger;
  const batches = useLlmLedgerDatabase(name, (t) => {
    ({ db, ledger } = t);
    use(t);
  });

  /** A gateway process's LLM ledger (ttl in seconds). */
  const processOf = (opts: { ttlSeconds?: number; idleMs?: number; db?: Db } = {}) => {
    const b = newLlmLedger(opts.db ?? db, ledger, {
      holdTtlMs: (opts.ttlSeconds ?? 900) * 1000,
      floatIdleMs: opts.idleMs ?? 30,
    });
    batches.push(b);
    return b;
  };
  /** A request id of its own for each call: the reservation's id, which keys the call's usage record. */
  const rid = (label: string) => `req_${label}_${Bun.randomUUIDv7()}`;
  const finish = (b: LlmLedger<Finish>, r: Reservation, charge: number | null) =>
    b.postOrVoid({ hold: r, charge, record: usageRecord(r.accountId, r.id, charge ?? 0) });
  return { processOf, rid, finish, ...floatReads(() => db) };
}

/** What the float left in the database: a wallet, its holds of a kind, the calls' lines, the usage entries. */
function floatReads(database: () => Db) {
  const wallet = async (id: string) => {
    const w = (await database().get<any>(sql`select balance, held from wallets where account_id = ${id}`))!;
    return { balance: Number(w.balance), held: Number(w.held) };
  };
  const holdsOf = async (id: string, kind: string) =>
    (
      await database().all<any>(
        sql`select id, amount, status, settled from holds where account_id = ${id} and kind = ${kind} order by created_at, id`,
      )
    ).map((h) => ({
      id: h.id,
      amount: Number(h.amount),
      status: h.status,
      settled: h.settled === null ? null : Number(h.settled),
    }));
  /** The calls' lines: their usage records, with what each reserved and was charged and the entry charging it. */
  const linesOf = async (id: string) =>
    (
      await database().all<any>(
        sql`select id, held, cost, entry_id from usage_records where account_id = ${id} order by created_at, id`,
      )
    ).map((l) => ({
      id: l.id,
      held: Number(l.held),
      cost: Number(l.cost),
      entry: l.entry_id,
    }));
  const usageEntriesOf = async (id: string) =>
    (
      await database().all<any>(
        sql`select id, amount from entries where account_id = ${id} and kind = 'usage' order by created_at, id`,
      )
    ).map((e) => ({ id: e.id, amount: Number(e.amount) }));
  const idle = async (id: string) => {
    for (let i = 0; i < 200 && (await wallet(id)).held !== 0; i++) await Bun.sleep(10);
  };
  return { wallet, holdsOf, linesOf, usageEntriesOf, idle };
}
