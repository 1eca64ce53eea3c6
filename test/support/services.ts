import { SQL, RedisClient } from "bun";
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Accounts } from "../../src/accounts/service";
import type { Db } from "../../src/db/client";
import type { Ledger } from "../../src/ledger/service";

// Real services for tests. Postgres and Redis are probed once; a suite that needs one that is absent is skipped
// with a message saying so (bun counts it as skipped, not passed). Each Postgres-backed test run gets a database
// of its own, so parallel runs never share state.

export const PG_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

async function probe(fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await Promise.race([fn(), Bun.sleep(2000).then(() => Promise.reject(new Error("timeout")))]);
    return true;
  } catch {
    return false;
  }
}

export const pgAvailable = await probe(async () => {
  const sql = new SQL(PG_ADMIN_URL, { max: 1, connectionTimeout: 2 });
  await sql`select 1`;
  await sql.close();
});

export const redisAvailable = await probe(async () => {
  const r = new RedisClient(REDIS_URL, { autoReconnect: false, connectionTimeout: 2000 });
  await r.connect();
  await r.send("PING", []);
  r.close();
});

export function skipNote(service: "Postgres" | "Redis", available: boolean, what: string) {
  if (!available)
    console.warn(
      `SKIPPED: ${what} — ${service} is not reachable (${service === "Postgres" ? PG_ADMIN_URL : REDIS_URL}).`,
    );
}

/** Creates an empty database for one test file; returns its URL and a drop function. */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sy_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new SQL(PG_ADMIN_URL, { max: 1 });
  await admin.unsafe(`create database ${name}`);
  await admin.close();
  const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  return {
    url,
    drop: async () => {
      const a = new SQL(PG_ADMIN_URL, { max: 1 });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.close();
    },
  };
}

export function tempSqlitePath(): string {
  return join(mkdtempSync(join(tmpdir(), "sy-test-")), "gateway.sqlite");
}

/** The database flavours a suite runs against: SQLite always, Postgres when reachable. */
export const dialects: Array<{ name: "sqlite" | "pg"; available: boolean }> = [
  { name: "sqlite", available: true },
  { name: "pg", available: pgAvailable },
];

export async function databaseFor(name: "sqlite" | "pg"): Promise<{ url: string; drop: () => Promise<void> }> {
  if (name === "pg") return freshPostgres();
  return { url: tempSqlitePath(), drop: async () => {} };
}

/** A migrated database of that flavour with the ledger and accounts over it (the ledger suites' setup). */
export interface LedgerDatabase {
  db: Db;
  ledger: Ledger;
  accounts: Accounts;
}

/**
 * A describe block's own database with a Ledger and Accounts on it: made before the block's tests and handed to
 * `use` (which keeps what it needs in the block's variables), dropped after them. `beforeDrop` runs first: closing
 * the block's LLM ledgers (closeBatches), whose last commits need the database.
 */
export function useLedgerDatabase(
  name: "sqlite" | "pg",
  use: (t: LedgerDatabase) => void,
  beforeDrop?: () => unknown,
): void {
  let close = async () => {};
  beforeAll(async () => {
    const t = await ledgerDatabase(name);
    close = t.close;
    use(t);
  });
  afterAll(async () => {
    await beforeDrop?.();
    await close();
  });
}

export async function closeBatches(batches: { close(ms: number): Promise<unknown> }[]): Promise<void> {
  for (const b of batches) await b.close(1000);
}

export async function ledgerDatabase(name: "sqlite" | "pg") {
  const { openDatabase } = await import("../../src/db/client");
  const { Ledger } = await import("../../src/ledger/service");
  const { Accounts } = await import("../../src/accounts/service");
  const target = await databaseFor(name);
  const db = await openDatabase(target.url);
  const ledger = new Ledger(db);
  return {
    db,
    ledger,
    accounts: new Accounts(db, ledger),
    async close() {
      await db.close();
      await target.drop();
    },
  };
}
